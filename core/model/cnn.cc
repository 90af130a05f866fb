// cnn: two 3x3 convolutions (32 and 64 channels, each followed by ReLU and
// 2x2 max-pooling) and two fully connected layers (128 hidden units). On
// Fashion-MNIST (1x28x28) it has 421,642 parameters: the "422k CNN" of
// the timings measured on the build machine (about 30 ms per batch-64 step on one core).
// With 5x5 kernels it would be 455k; 3x3 matches the reference size.
#include "core/model/architectures.h"
#include "core/model/zoo_module.h"

namespace st::model {
namespace {

torch::nn::Conv2d conv3x3(int64_t in, int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1));
}

class Cnn final : public ZooModule {
 public:
  explicit Cnn(const ModelShape& shape)
      : conv1_(register_module("conv1", conv3x3(shape.channels, kCnnConv1Channels))),
        conv2_(register_module("conv2", conv3x3(kCnnConv1Channels, kCnnConv2Channels))),
        // Two 2x2 poolings (floor) shrink each side by 4.
        fc1_(register_module(
            "fc1", torch::nn::Linear(kCnnConv2Channels * (shape.height / 4) * (shape.width / 4), kCnnHidden))),
        fc2_(register_module("fc2", torch::nn::Linear(kCnnHidden, shape.classes))) {}

  torch::Tensor forward(torch::Tensor images) override {
    auto x = torch::max_pool2d(torch::relu(conv1_(images)), 2);
    x = torch::max_pool2d(torch::relu(conv2_(x)), 2);
    x = torch::relu(fc1_(x.flatten(1)));
    return fc2_(x);
  }

 private:
  torch::nn::Conv2d conv1_;
  torch::nn::Conv2d conv2_;
  torch::nn::Linear fc1_;
  torch::nn::Linear fc2_;
};

}  // namespace

// make_model has checked the shape (at least 4x4: check_model_shape).
std::shared_ptr<ZooModule> build_cnn(const ModelShape& shape) { return std::make_shared<Cnn>(shape); }

}  // namespace st::model
