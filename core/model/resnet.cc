// resnet18, CIFAR-style (He et al. 2016, as in the common CIFAR-10 recipes):
// a 3x3 stride-1 stem without max-pooling, because 28x28 / 32x32 images are
// too small for ImageNet's 7x7 stride-2 stem and pooling; then four stages of
// two BasicBlocks with 64, 128, 256, 512 channels (stride 2 from the second
// stage on), global average pooling and one fully connected layer.
// 11,173,962 parameters for 3 input channels and 10 classes.
#include <cmath>

#include "core/model/zoo_module.h"

namespace st::model {
namespace {

constexpr int64_t kStageWidths[] = {64, 128, 256, 512};
constexpr int64_t kBlocksPerStage = 2;

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", conv(in, out, 3, stride))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", conv(out, out, 3, 1))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    // A projection shortcut only where the shape changes.
    if (stride != 1 || in != out) {
      shortcut_ = register_module("shortcut", torch::nn::Sequential(conv(in, out, 1, stride),
                                                                    torch::nn::BatchNorm2d(out)));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    auto out = torch::relu(bn1_(conv1_(x)));
    out = bn2_(conv2_(out));
    return torch::relu(out + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Sequential shortcut_{nullptr};
};
TORCH_MODULE(BasicBlock);

class ResNet18 final : public ZooModule {
 public:
  explicit ResNet18(const ModelShape& shape)
      : stem_conv_(register_module("conv1", conv(shape.channels, kStageWidths[0], 3, 1))),
        stem_bn_(register_module("bn1", torch::nn::BatchNorm2d(kStageWidths[0]))),
        fc_(nullptr) {
    int64_t in = kStageWidths[0];
    for (int stage = 0; stage < 4; ++stage) {
      torch::nn::Sequential blocks;
      for (int64_t b = 0; b < kBlocksPerStage; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        blocks->push_back(BasicBlock(in, kStageWidths[stage], stride));
        in = kStageWidths[stage];
      }
      stages_.push_back(register_module("layer" + std::to_string(stage + 1), blocks));
    }
    fc_ = register_module("fc", torch::nn::Linear(in, shape.classes));
    initialize_like_torchvision();
  }

  torch::Tensor forward(torch::Tensor images) override {
    auto x = torch::relu(stem_bn_(stem_conv_(images)));
    for (auto& stage : stages_) x = stage->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  // torchvision's ResNet init: Kaiming-normal (fan_out) convolutions, BatchNorm
  // scale 1 and shift 0; LibTorch's default conv init trains noticeably slower.
  void initialize_like_torchvision() {
    torch::NoGradGuard no_grad;
    for (auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<torch::nn::Conv2d>()) {
        torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
        torch::nn::init::ones_(bn->weight);
        torch::nn::init::zeros_(bn->bias);
      }
    }
  }

  torch::nn::Conv2d stem_conv_;
  torch::nn::BatchNorm2d stem_bn_;
  std::vector<torch::nn::Sequential> stages_;
  torch::nn::Linear fc_;
};

}  // namespace

std::shared_ptr<ZooModule> build_resnet18(const ModelShape& shape) {
  return std::make_shared<ResNet18>(shape);
}

}  // namespace st::model
