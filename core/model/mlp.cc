// mlp: one hidden layer of 256 ReLU units (784-256-10 on Fashion-MNIST,
// 203,530 parameters); the cheapest model, for fast pipeline tests.
#include "core/model/architectures.h"
#include "core/model/zoo_module.h"

namespace st::model {
namespace {

class Mlp final : public ZooModule {
 public:
  explicit Mlp(const ModelShape& shape)
      : hidden_(register_module("fc1", torch::nn::Linear(shape.channels * shape.height * shape.width, kMlpHidden))),
        output_(register_module("fc2", torch::nn::Linear(kMlpHidden, shape.classes))) {}

  torch::Tensor forward(torch::Tensor images) override {
    auto x = images.flatten(1);
    x = torch::relu(hidden_(x));
    return output_(x);
  }

 private:
  torch::nn::Linear hidden_;
  torch::nn::Linear output_;
};

}  // namespace

std::shared_ptr<ZooModule> build_mlp(const ModelShape& shape) { return std::make_shared<Mlp>(shape); }

}  // namespace st::model
