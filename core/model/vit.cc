// vit: a small Vision Transformer (Dosovitskiy et al. 2021) for 28x28 and
// 32x32 images: 4x4 patches embedded to 96 dimensions, a class token and
// learned position embeddings, 4 pre-norm encoder blocks (4-head
// self-attention, MLP 96-192-96 with GELU), a final LayerNorm and a linear
// head on the class token. 306,826 parameters on Fashion-MNIST (49 patches).
// Attention is written out with matmuls rather than nn::MultiheadAttention so
// the parameter names and order stay simple (qkv, proj) and batch-first.
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/model/zoo_module.h"

namespace st::model {
namespace {

constexpr int64_t kPatch = 4;
constexpr int64_t kDim = 96;
constexpr int64_t kDepth = 4;
constexpr int64_t kHeads = 4;
constexpr int64_t kMlpHidden = 2 * kDim;

class SelfAttentionImpl : public torch::nn::Module {
 public:
  SelfAttentionImpl()
      : qkv_(register_module("qkv", torch::nn::Linear(kDim, 3 * kDim))),
        proj_(register_module("proj", torch::nn::Linear(kDim, kDim))) {}

  // x: [batch, tokens, dim]
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t batch = x.size(0), tokens = x.size(1), head_dim = kDim / kHeads;
    // [batch, tokens, 3, heads, head_dim] -> [3, batch, heads, tokens, head_dim]
    auto qkv = qkv_(x).reshape({batch, tokens, 3, kHeads, head_dim}).permute({2, 0, 3, 1, 4});
    auto q = qkv[0], k = qkv[1], v = qkv[2];
    auto weights = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(head_dim)), -1);
    auto out = torch::matmul(weights, v).transpose(1, 2).reshape({batch, tokens, kDim});
    return proj_(out);
  }

 private:
  torch::nn::Linear qkv_;
  torch::nn::Linear proj_;
};
TORCH_MODULE(SelfAttention);

class EncoderBlockImpl : public torch::nn::Module {
 public:
  EncoderBlockImpl()
      : norm1_(register_module("norm1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})))),
        attention_(register_module("attn", SelfAttention())),
        norm2_(register_module("norm2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})))),
        fc1_(register_module("fc1", torch::nn::Linear(kDim, kMlpHidden))),
        fc2_(register_module("fc2", torch::nn::Linear(kMlpHidden, kDim))) {}

  torch::Tensor forward(torch::Tensor x) {
    x = x + attention_(norm1_(x));
    return x + fc2_(torch::gelu(fc1_(norm2_(x))));
  }

 private:
  torch::nn::LayerNorm norm1_;
  SelfAttention attention_;
  torch::nn::LayerNorm norm2_;
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};
TORCH_MODULE(EncoderBlock);

class VisionTransformer final : public ZooModule {
 public:
  explicit VisionTransformer(const ModelShape& shape)
      : patch_embed_(register_module(
            "patch_embed",
            torch::nn::Conv2d(torch::nn::Conv2dOptions(shape.channels, kDim, kPatch).stride(kPatch)))),
        cls_token_(register_parameter("cls_token", torch::zeros({1, 1, kDim}))),
        pos_embed_(register_parameter(
            "pos_embed", torch::zeros({1, 1 + (shape.height / kPatch) * (shape.width / kPatch), kDim}))),
        norm_(nullptr),
        head_(nullptr) {
    for (int64_t i = 0; i < kDepth; ++i) {
      blocks_.push_back(register_module("block" + std::to_string(i), EncoderBlock()));
    }
    norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDim})));
    head_ = register_module("head", torch::nn::Linear(kDim, shape.classes));
    initialize();
  }

  torch::Tensor forward(torch::Tensor images) override {
    // [batch, dim, h/p, w/p] -> [batch, patches, dim]
    auto x = patch_embed_(images).flatten(2).transpose(1, 2);
    x = torch::cat({cls_token_.expand({x.size(0), 1, kDim}), x}, 1) + pos_embed_;
    for (auto& block : blocks_) x = block(x);
    return head_(norm_(x).select(1, 0));
  }

 private:
  // The original ViT's scheme: Xavier-uniform linear layers with zero bias,
  // small normal class token and position embeddings.
  void initialize() {
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* linear = module->as<torch::nn::Linear>()) {
        torch::nn::init::xavier_uniform_(linear->weight);
        torch::nn::init::zeros_(linear->bias);
      }
    }
    torch::nn::init::normal_(cls_token_, 0.0, 0.02);
    torch::nn::init::normal_(pos_embed_, 0.0, 0.02);
  }

  torch::nn::Conv2d patch_embed_;
  torch::Tensor cls_token_;
  torch::Tensor pos_embed_;
  std::vector<EncoderBlock> blocks_;
  torch::nn::LayerNorm norm_;
  torch::nn::Linear head_;
};

}  // namespace

std::shared_ptr<ZooModule> build_vit(const ModelShape& shape) {
  if (shape.height % kPatch != 0 || shape.width % kPatch != 0) {
    throw std::invalid_argument(fmt::format(
        "model 'vit' cuts {}x{} patches; image size {}x{} is not a multiple (28x28 and 32x32 work)",
        kPatch, kPatch, shape.height, shape.width));
  }
  return std::make_shared<VisionTransformer>(shape);
}

}  // namespace st::model
