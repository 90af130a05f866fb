#pragma once
// Internal to core/model: what a Model runs. The zoo's torch::nn modules
// (model_zoo.cc) and TorchScript modules (torchscript_model.cc) implement
// it; the rest of the engine sees only Model. ATen only.
#include <ATen/core/Tensor.h>

#include <vector>

#include "core/model/model.h"

namespace st::model {

class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  // images [N, C, H, W] (already checked) -> logits [N, classes].
  virtual at::Tensor forward(const at::Tensor& images) = 0;
  // In registration order: the order of every per-layer pipeline stage.
  virtual std::vector<at::Tensor> parameters() const = 0;
  virtual std::vector<NamedTensor> named_parameters() const = 0;
  virtual std::vector<NamedTensor> named_buffers() const = 0;
  virtual void train(bool training) = 0;
  virtual bool is_training() const = 0;
  // Zeroes the gradients in place (not to none), as nn::Module::zero_grad
  // with set_to_none = false.
  virtual void zero_grad() = 0;
  virtual void to(const c10::Device& device) = 0;
};

}  // namespace st::model
