#include "core/model/flops.h"
#include "core/model/torchscript_model.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "core/model/architectures.h"

namespace st::model {
namespace {

// Side of a convolution's or pooling's output, as LibTorch computes it.
int64_t output_side(int64_t in, int64_t kernel, int64_t stride, int64_t padding) {
  return (in + 2 * padding - kernel) / stride + 1;
}

// 2 x MACs of a k x k convolution producing an out_h x out_w map.
double conv_flops(int64_t in, int64_t out, int64_t kernel, int64_t out_h, int64_t out_w) {
  return 2.0 * in * out * kernel * kernel * out_h * out_w;
}

// 2 x MACs of a linear layer applied to `rows` vectors (tokens).
double linear_flops(int64_t in, int64_t out, int64_t rows = 1) { return 2.0 * in * out * rows; }

// Collects the entries of parameter_forward_flops in registration order.
class FlopsLedger {
 public:
  void parameter(std::string name, double flops) { entries_.push_back({std::move(name), flops}); }

  // A convolution or linear layer: the weight carries the product's FLOPs,
  // the bias (elementwise) none.
  void layer(const std::string& module, double flops, bool has_bias) {
    parameter(module + ".weight", flops);
    if (has_bias) parameter(module + ".bias", 0);
  }

  // BatchNorm or LayerNorm scale and shift: elementwise, outside the count.
  void norm(const std::string& module) {
    parameter(module + ".weight", 0);
    parameter(module + ".bias", 0);
  }

  std::vector<ParameterFlops> take() { return std::move(entries_); }

 private:
  std::vector<ParameterFlops> entries_;
};

constexpr bool kBias = true;
constexpr bool kNoBias = false;  // convolutions followed by BatchNorm

void count_mlp(const ModelShape& s, FlopsLedger& ledger) {
  ledger.layer("fc1", linear_flops(s.channels * s.height * s.width, kMlpHidden), kBias);
  ledger.layer("fc2", linear_flops(kMlpHidden, s.classes), kBias);
}

void count_cnn(const ModelShape& s, FlopsLedger& ledger) {  // each conv keeps its size, each 2x2 pool halves it
  ledger.layer("conv1", conv_flops(s.channels, kCnnConv1Channels, 3, s.height, s.width), kBias);
  const int64_t h = s.height / 2, w = s.width / 2;
  ledger.layer("conv2", conv_flops(kCnnConv1Channels, kCnnConv2Channels, 3, h, w), kBias);
  ledger.layer("fc1", linear_flops(kCnnConv2Channels * (h / 2) * (w / 2), kCnnHidden), kBias);
  ledger.layer("fc2", linear_flops(kCnnHidden, s.classes), kBias);
}

// A conv + BatchNorm pair as the ResNets register them.
void conv_bn(FlopsLedger& ledger, const std::string& conv, const std::string& bn, double flops) {
  ledger.layer(conv, flops, kNoBias);
  ledger.norm(bn);
}

// The size of a ResNet feature map.
struct MapSize {
  int64_t h, w;
  // After a 3x3 stride-2 padding-1 convolution or pooling; a 1x1 stride-2
  // convolution gives the same size.
  MapSize halved() const { return {output_side(h, 3, 2, 1), output_side(w, 3, 2, 1)}; }
};

// Where a ResNet block sits: its input channels and map, and its stride.
struct BlockInput {
  int64_t channels;
  MapSize map;
  int64_t stride;  // 1, or 2 in the first block of every stage but the first
  MapSize output_map() const { return stride == 1 ? map : map.halved(); }
};

// A projection shortcut only where the shape changes, as in resnet.cc.
void count_shortcut(FlopsLedger& ledger, const std::string& prefix, const BlockInput& input, int64_t out) {
  if (input.stride != 1 || input.channels != out) {
    const MapSize map = input.output_map();
    conv_bn(ledger, prefix + "shortcut.0", prefix + "shortcut.1", conv_flops(input.channels, out, 1, map.h, map.w));
  }
}

void count_basic_block(FlopsLedger& ledger, const std::string& prefix, const BlockInput& input, int64_t out) {
  const MapSize map = input.output_map();
  conv_bn(ledger, prefix + "conv1", prefix + "bn1", conv_flops(input.channels, out, 3, map.h, map.w));
  conv_bn(ledger, prefix + "conv2", prefix + "bn2", conv_flops(out, out, 3, map.h, map.w));
  count_shortcut(ledger, prefix, input, out);
}

// The 3x3 convolution carries the stride, so conv1 runs on the input map.
void count_bottleneck(FlopsLedger& ledger, const std::string& prefix, const BlockInput& input, int64_t width) {
  const int64_t out = width * kBottleneckExpansion;
  const MapSize map = input.output_map();
  conv_bn(ledger, prefix + "conv1", prefix + "bn1", conv_flops(input.channels, width, 1, input.map.h, input.map.w));
  conv_bn(ledger, prefix + "conv2", prefix + "bn2", conv_flops(width, width, 3, map.h, map.w));
  conv_bn(ledger, prefix + "conv3", prefix + "bn3", conv_flops(width, out, 1, map.h, map.w));
  count_shortcut(ledger, prefix, input, out);
}

std::string block_prefix(std::size_t stage, int64_t block) { return fmt::format("layer{}.{}.", stage + 1, block); }

int64_t block_stride(std::size_t stage, int64_t block) { return (stage > 0 && block == 0) ? 2 : 1; }

void count_resnet18(const ModelShape& s, FlopsLedger& ledger) {  // CIFAR stem: 3x3 stride 1, no pooling
  BlockInput input{kResNetStageWidths[0], {s.height, s.width}, 1};
  conv_bn(ledger, "conv1", "bn1", conv_flops(s.channels, input.channels, 3, s.height, s.width));
  for (std::size_t stage = 0; stage < kResNetStageWidths.size(); ++stage) {
    for (int64_t block = 0; block < kResNet18BlocksPerStage; ++block) {
      input.stride = block_stride(stage, block);
      count_basic_block(ledger, block_prefix(stage, block), input, kResNetStageWidths[stage]);
      input = {kResNetStageWidths[stage], input.output_map(), 1};
    }
  }
  ledger.layer("fc", linear_flops(input.channels, s.classes), kBias);
}

void count_bottleneck_resnet(const ModelShape& s, const BottleneckStages& blocks_per_stage, FlopsLedger& ledger) {
  // ImageNet stem: 7x7 stride 2 padding 3, then 3x3 stride-2 max-pooling.
  const MapSize stem{output_side(s.height, 7, 2, 3), output_side(s.width, 7, 2, 3)};
  conv_bn(ledger, "conv1", "bn1", conv_flops(s.channels, kImageNetStemWidth, 7, stem.h, stem.w));
  BlockInput input{kImageNetStemWidth, stem.halved(), 1};
  for (std::size_t stage = 0; stage < kResNetStageWidths.size(); ++stage) {
    for (int64_t block = 0; block < blocks_per_stage[stage]; ++block) {
      input.stride = block_stride(stage, block);
      count_bottleneck(ledger, block_prefix(stage, block), input, kResNetStageWidths[stage]);
      input = {kResNetStageWidths[stage] * kBottleneckExpansion, input.output_map(), 1};
    }
  }
  ledger.layer("fc", linear_flops(input.channels, s.classes), kBias);
}

void count_encoder_block(FlopsLedger& ledger, const std::string& prefix, const VitConfig& c, int64_t tokens) {
  // Scores q k^T and the weighted sum of v: tokens x tokens x dim MACs each
  // over all heads together; charged to qkv, whose output they consume.
  const double attention_products = 2 * (2.0 * tokens * tokens * c.dim);
  ledger.norm(prefix + "norm1");
  ledger.layer(prefix + "attn.qkv", linear_flops(c.dim, 3 * c.dim, tokens) + attention_products, kBias);
  ledger.layer(prefix + "attn.proj", linear_flops(c.dim, c.dim, tokens), kBias);
  ledger.norm(prefix + "norm2");
  ledger.layer(prefix + "fc1", linear_flops(c.dim, c.mlp_hidden, tokens), kBias);
  ledger.layer(prefix + "fc2", linear_flops(c.mlp_hidden, c.dim, tokens), kBias);
}

void count_vit(const ModelShape& s, const VitConfig& c, FlopsLedger& ledger) {
  const int64_t grid_h = s.height / c.patch, grid_w = s.width / c.patch, tokens = grid_h * grid_w + 1;
  // LibTorch lists a module's own parameters before its submodules'.
  ledger.parameter("cls_token", 0);
  ledger.parameter("pos_embed", 0);
  ledger.layer("patch_embed", conv_flops(s.channels, c.dim, c.patch, grid_h, grid_w), kBias);
  for (int64_t i = 0; i < c.depth; ++i) count_encoder_block(ledger, fmt::format("block{}.", i), c, tokens);
  ledger.norm("norm");
  ledger.layer("head", linear_flops(c.dim, s.classes), kBias);  // on the class token only
}

using Counter = void (*)(const ModelShape&, FlopsLedger&);

struct CounterEntry {
  const char* model;
  Counter count;
};

const CounterEntry kCounters[] = {
    {"mlp", count_mlp},
    {"cnn", count_cnn},
    {"resnet18", count_resnet18},
    {"vit", [](const ModelShape& s, FlopsLedger& ledger) { count_vit(s, kVitSmall, ledger); }},
    {"resnet50",
     [](const ModelShape& s, FlopsLedger& ledger) { count_bottleneck_resnet(s, kResNet50Stages, ledger); }},
    {"resnet152",
     [](const ModelShape& s, FlopsLedger& ledger) { count_bottleneck_resnet(s, kResNet152Stages, ledger); }},
    {"vit-b16", [](const ModelShape& s, FlopsLedger& ledger) { count_vit(s, kVitBase16, ledger); }},
};

Counter find_counter(const std::string& model) {
  for (const CounterEntry& entry : kCounters) {
    if (model == entry.model) return entry.count;
  }
  std::vector<std::string> known;
  for (const CounterEntry& entry : kCounters) known.emplace_back(entry.model);
  throw std::invalid_argument(fmt::format("model '{}': no FLOP count (known: {})", model, fmt::join(known, ", ")));
}

}  // namespace

std::vector<ParameterFlops> parameter_forward_flops(const std::string& model, const ModelShape& shape) {
  const Counter count = find_counter(model);
  check_model_shape(model, shape);
  FlopsLedger ledger;
  count(shape, ledger);
  return ledger.take();
}

double forward_flops_per_sample(const std::string& model, const ModelShape& shape) {
  double total = 0;
  for (const ParameterFlops& entry : parameter_forward_flops(model, shape)) total += entry.forward_flops;
  return total;
}

std::vector<ParameterFlops> parameter_forward_flops(const ModelSpec& spec, const ModelShape& shape) {
  if (spec.is_torchscript()) return torchscript_parameter_flops(spec, shape);
  return parameter_forward_flops(spec.name, shape);
}

double forward_flops_per_sample(const ModelSpec& spec, const ModelShape& shape) {
  double total = 0;
  for (const ParameterFlops& entry : parameter_forward_flops(spec, shape)) total += entry.forward_flops;
  return total;
}

}  // namespace st::model
