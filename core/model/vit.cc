// Vision Transformers (Dosovitskiy et al. 2021): patches embedded by a
// strided convolution, a class token and learned position embeddings,
// pre-norm encoder blocks (multi-head self-attention, then an MLP with GELU),
// a final LayerNorm and a linear head on the class token.
//   vit      4x4 patches, dim 96, 4 blocks of 4 heads, MLP 192: for 28x28 and
//            32x32 images (306,826 parameters on Fashion-MNIST, 49 patches).
//   vit-b16  ViT-Base/16: 16x16 patches, dim 768, 12 blocks of 12 heads,
//            MLP 3072 (85,875,556 parameters for 3x224x224 and 100 classes,
//            those of torchvision's vit_b_16).
// Attention is written out with matmuls rather than nn::MultiheadAttention so
// the parameter names and order stay simple (qkv, proj) and batch-first.
#include <cmath>

#include "core/model/architectures.h"
#include "core/model/zoo_module.h"

namespace st::model {
namespace {

torch::nn::LayerNorm layer_norm(const VitConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim}).eps(config.layer_norm_eps));
}

class SelfAttentionImpl : public torch::nn::Module {
 public:
  explicit SelfAttentionImpl(const VitConfig& config)
      : dim_(config.dim),
        heads_(config.heads),
        qkv_(register_module("qkv", torch::nn::Linear(dim_, 3 * dim_))),
        proj_(register_module("proj", torch::nn::Linear(dim_, dim_))) {}

  // x: [batch, tokens, dim]
  torch::Tensor forward(const torch::Tensor& x) {
    const int64_t batch = x.size(0), tokens = x.size(1), head_dim = dim_ / heads_;
    // [batch, tokens, 3, heads, head_dim] -> [3, batch, heads, tokens, head_dim]
    auto qkv = qkv_(x).reshape({batch, tokens, 3, heads_, head_dim}).permute({2, 0, 3, 1, 4});
    auto q = qkv[0], k = qkv[1], v = qkv[2];
    auto weights = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(head_dim)), -1);
    auto out = torch::matmul(weights, v).transpose(1, 2).reshape({batch, tokens, dim_});
    return proj_(out);
  }

 private:
  int64_t dim_;
  int64_t heads_;
  torch::nn::Linear qkv_;
  torch::nn::Linear proj_;
};
TORCH_MODULE(SelfAttention);

class EncoderBlockImpl : public torch::nn::Module {
 public:
  explicit EncoderBlockImpl(const VitConfig& config)
      : norm1_(register_module("norm1", layer_norm(config))),
        attention_(register_module("attn", SelfAttention(config))),
        norm2_(register_module("norm2", layer_norm(config))),
        fc1_(register_module("fc1", torch::nn::Linear(config.dim, config.mlp_hidden))),
        fc2_(register_module("fc2", torch::nn::Linear(config.mlp_hidden, config.dim))) {}

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
  VisionTransformer(const ModelShape& shape, const VitConfig& config)
      : dim_(config.dim),
        patch_embed_(register_module(
            "patch_embed", torch::nn::Conv2d(torch::nn::Conv2dOptions(shape.channels, dim_, config.patch)
                                                 .stride(config.patch)))),
        cls_token_(register_parameter("cls_token", torch::zeros({1, 1, dim_}))),
        pos_embed_(register_parameter(
            "pos_embed",
            torch::zeros({1, 1 + (shape.height / config.patch) * (shape.width / config.patch), dim_}))),
        norm_(nullptr),
        head_(nullptr) {
    for (int64_t i = 0; i < config.depth; ++i) {
      blocks_.push_back(register_module("block" + std::to_string(i), EncoderBlock(config)));
    }
    norm_ = register_module("norm", layer_norm(config));
    head_ = register_module("head", torch::nn::Linear(dim_, shape.classes));
    initialize();
  }

  torch::Tensor forward(torch::Tensor images) override {
    // [batch, dim, h/p, w/p] -> [batch, patches, dim]
    auto x = patch_embed_(images).flatten(2).transpose(1, 2);
    x = torch::cat({cls_token_.expand({x.size(0), 1, dim_}), x}, 1) + pos_embed_;
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

  int64_t dim_;
  torch::nn::Conv2d patch_embed_;
  torch::Tensor cls_token_;
  torch::Tensor pos_embed_;
  std::vector<EncoderBlock> blocks_;
  torch::nn::LayerNorm norm_;
  torch::nn::Linear head_;
};

}  // namespace

// make_model has checked the shape (check_model_shape).
std::shared_ptr<ZooModule> build_vit(const ModelShape& shape) {
  return std::make_shared<VisionTransformer>(shape, kVitSmall);
}

std::shared_ptr<ZooModule> build_vit_b16(const ModelShape& shape) {
  return std::make_shared<VisionTransformer>(shape, kVitBase16);
}

}  // namespace st::model
