#pragma once
// Internal to core/model: the common base of the zoo's torch modules and the
// per-model builders. Includes <torch/torch.h>; only .cc files include it.
// make_model checks the shape (check_model_shape, architectures.h) before it
// calls a builder.
#include <torch/torch.h>

#include <memory>

#include "core/model/model.h"

namespace st::model {

// torch::nn::Module has no virtual forward; this adds one so Model can run
// any zoo member.
class ZooModule : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor images) = 0;
};

std::shared_ptr<ZooModule> build_mlp(const ModelShape& shape);
std::shared_ptr<ZooModule> build_cnn(const ModelShape& shape);
std::shared_ptr<ZooModule> build_resnet18(const ModelShape& shape);
std::shared_ptr<ZooModule> build_vit(const ModelShape& shape);
std::shared_ptr<ZooModule> build_resnet50(const ModelShape& shape);
std::shared_ptr<ZooModule> build_resnet152(const ModelShape& shape);
std::shared_ptr<ZooModule> build_vit_b16(const ModelShape& shape);

}  // namespace st::model
