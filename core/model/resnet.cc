// ResNets (He et al. 2016), with torchvision's initialization.
//   resnet18   CIFAR-style, as in the common CIFAR-10 recipes: a 3x3 stride-1
//              stem without max-pooling, because 28x28 / 32x32 images are too
//              small for ImageNet's 7x7 stride-2 stem and pooling; then four
//              stages of two BasicBlocks with 64, 128, 256, 512 channels
//              (stride 2 from the second stage on), global average pooling
//              and one fully connected layer. 11,173,962 parameters for 3
//              input channels and 10 classes.
//   resnet50   ImageNet-style: a 7x7 stride-2 stem and 3x3 stride-2
//   resnet152  max-pooling, then four stages of bottleneck blocks ([3,4,6,3]
//              and [3,8,36,3]; 1x1 reduce, 3x3, 1x1 expand by 4, stride on
//              the 3x3 as in torchvision), global average pooling and fc.
//              23,712,932 and 58,348,708 parameters for 3x224x224 and 100
//              classes, those of torchvision's resnet50 / resnet152.
// Projection shortcuts (1x1 convolution and BatchNorm) only where the shape
// changes; the zoo calls them `shortcut` in both styles.

#include "core/model/architectures.h"
#include "core/model/zoo_module.h"

namespace st::model {
namespace {

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  return torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
}

torch::nn::Sequential projection(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Sequential(conv(in, out, 1, stride), torch::nn::BatchNorm2d(out));
}

// torchvision's ResNet init: Kaiming-normal (fan_out) convolutions, BatchNorm
// scale 1 and shift 0; LibTorch's default conv init trains noticeably slower.
void initialize_like_torchvision(torch::nn::Module& net) {
  torch::NoGradGuard no_grad;
  for (auto& module : net.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      torch::nn::init::ones_(bn->weight);
      torch::nn::init::zeros_(bn->bias);
    }
  }
}

class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1_(register_module("conv1", conv(in, out, 3, stride))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(out))),
        conv2_(register_module("conv2", conv(out, out, 3, 1))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(out))) {
    if (stride != 1 || in != out) shortcut_ = register_module("shortcut", projection(in, out, stride));
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

class BottleneckImpl : public torch::nn::Module {
 public:
  BottleneckImpl(int64_t in, int64_t width, int64_t stride)
      : conv1_(register_module("conv1", conv(in, width, 1, 1))),
        bn1_(register_module("bn1", torch::nn::BatchNorm2d(width))),
        conv2_(register_module("conv2", conv(width, width, 3, stride))),
        bn2_(register_module("bn2", torch::nn::BatchNorm2d(width))),
        conv3_(register_module("conv3", conv(width, width * kBottleneckExpansion, 1, 1))),
        bn3_(register_module("bn3", torch::nn::BatchNorm2d(width * kBottleneckExpansion))) {
    const int64_t out = width * kBottleneckExpansion;
    if (stride != 1 || in != out) shortcut_ = register_module("shortcut", projection(in, out, stride));
  }

  torch::Tensor forward(torch::Tensor x) {
    auto out = torch::relu(bn1_(conv1_(x)));
    out = torch::relu(bn2_(conv2_(out)));
    out = bn3_(conv3_(out));
    return torch::relu(out + (shortcut_ ? shortcut_->forward(x) : x));
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::BatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  torch::nn::BatchNorm2d bn2_;
  torch::nn::Conv2d conv3_;
  torch::nn::BatchNorm2d bn3_;
  torch::nn::Sequential shortcut_{nullptr};
};
TORCH_MODULE(Bottleneck);

class ResNet18 final : public ZooModule {
 public:
  explicit ResNet18(const ModelShape& shape)
      : stem_conv_(register_module("conv1", conv(shape.channels, kResNetStageWidths[0], 3, 1))),
        stem_bn_(register_module("bn1", torch::nn::BatchNorm2d(kResNetStageWidths[0]))),
        fc_(nullptr) {
    int64_t in = kResNetStageWidths[0];
    for (std::size_t stage = 0; stage < kResNetStageWidths.size(); ++stage) {
      torch::nn::Sequential blocks;
      for (int64_t b = 0; b < kResNet18BlocksPerStage; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        blocks->push_back(BasicBlock(in, kResNetStageWidths[stage], stride));
        in = kResNetStageWidths[stage];
      }
      stages_.push_back(register_module("layer" + std::to_string(stage + 1), blocks));
    }
    fc_ = register_module("fc", torch::nn::Linear(in, shape.classes));
    initialize_like_torchvision(*this);
  }

  torch::Tensor forward(torch::Tensor images) override {
    auto x = torch::relu(stem_bn_(stem_conv_(images)));
    for (auto& stage : stages_) x = stage->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  torch::nn::Conv2d stem_conv_;
  torch::nn::BatchNorm2d stem_bn_;
  std::vector<torch::nn::Sequential> stages_;
  torch::nn::Linear fc_;
};

class BottleneckResNet final : public ZooModule {
 public:
  BottleneckResNet(const ModelShape& shape, const BottleneckStages& blocks_per_stage)
      : stem_conv_(register_module("conv1", conv(shape.channels, kImageNetStemWidth, 7, 2))),
        stem_bn_(register_module("bn1", torch::nn::BatchNorm2d(kImageNetStemWidth))),
        fc_(nullptr) {
    int64_t in = kImageNetStemWidth;
    for (std::size_t stage = 0; stage < kResNetStageWidths.size(); ++stage) {
      torch::nn::Sequential blocks;
      for (int64_t b = 0; b < blocks_per_stage[stage]; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        blocks->push_back(Bottleneck(in, kResNetStageWidths[stage], stride));
        in = kResNetStageWidths[stage] * kBottleneckExpansion;
      }
      stages_.push_back(register_module("layer" + std::to_string(stage + 1), blocks));
    }
    fc_ = register_module("fc", torch::nn::Linear(in, shape.classes));
    initialize_like_torchvision(*this);
  }

  torch::Tensor forward(torch::Tensor images) override {
    auto x = torch::relu(stem_bn_(stem_conv_(images)));
    x = torch::max_pool2d(x, /*kernel_size=*/3, /*stride=*/2, /*padding=*/1);
    for (auto& stage : stages_) x = stage->forward(x);
    x = torch::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc_(x);
  }

 private:
  torch::nn::Conv2d stem_conv_;
  torch::nn::BatchNorm2d stem_bn_;
  std::vector<torch::nn::Sequential> stages_;
  torch::nn::Linear fc_;
};

}  // namespace

std::shared_ptr<ZooModule> build_resnet18(const ModelShape& shape) {
  return std::make_shared<ResNet18>(shape);
}

// make_model has checked the shape (at least 32x32: check_model_shape).
std::shared_ptr<ZooModule> build_resnet50(const ModelShape& shape) {
  return std::make_shared<BottleneckResNet>(shape, kResNet50Stages);
}

std::shared_ptr<ZooModule> build_resnet152(const ModelShape& shape) {
  return std::make_shared<BottleneckResNet>(shape, kResNet152Stages);
}

}  // namespace st::model
