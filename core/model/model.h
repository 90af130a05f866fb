#pragma once
// The model zoo: LibTorch modules chosen by name (mlp, cnn, resnet18, vit for
// 28x28 / 32x32 images; resnet50, resnet152, vit-b16 for ImageNet-sized ones),
// and TorchScript files of one's own (ModelSpec, core/model/torchscript_model.h).
// This header includes only <ATen/core/Tensor.h> (about 2 s per TU, against
// 17 s for <torch/torch.h>); torch::nn::Module is only declared, so callers
// that need the module itself include <torch/torch.h> on their own.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model_spec.h"

namespace torch::nn {
class Module;
}

namespace st::model {

// The input and output a model is built for.
struct ModelShape {
  int64_t channels = 1;  // 1 for Fashion-MNIST, 3 for CIFAR-10
  int64_t height = 28;
  int64_t width = 28;
  int64_t classes = 10;
};

struct NamedTensor {
  std::string name;  // e.g. "layer1.0.conv1.weight"
  at::Tensor tensor;
};

// What a Model runs: a zoo module or a TorchScript module
// (core/model/model_backend.h).
class ModelBackend;

// A handle to one model instance. Copies share the same module and hence the
// same parameters, like torch::nn::ModuleHolder.
class Model {
 public:
  Model(std::string name, ModelShape shape, std::shared_ptr<ModelBackend> backend);

  const std::string& name() const { return name_; }
  const ModelShape& shape() const { return shape_; }

  // images: float [batch, channels, height, width] -> logits [batch, classes].
  // Throws std::invalid_argument naming the model when the input shape does
  // not match the shape it was built for.
  at::Tensor forward(const at::Tensor& images) const;

  // Parameters in registration order; that order defines the layout of the
  // flattened gradient and of every per-layer pipeline stage.
  std::vector<at::Tensor> parameters() const;
  std::vector<NamedTensor> named_parameters() const;
  // Non-trainable state (BatchNorm running statistics).
  std::vector<NamedTensor> named_buffers() const;
  int64_t parameter_count() const;

  void set_training(bool training) const;  // BatchNorm: batch vs running stats
  bool is_training() const;
  void zero_grad() const;
  void to(const c10::Device& device) const;


 private:
  std::string name_;
  ModelShape shape_;
  std::shared_ptr<ModelBackend> backend_;
};

// The names make_model accepts, in a fixed order.
std::vector<std::string> model_names();

// Builds a model with freshly initialized parameters (from LibTorch's global
// generator). Throws std::invalid_argument listing the known names for an
// unknown name, or explaining a shape the model cannot take.
Model make_model(const std::string& name, const ModelShape& shape);

// Same, but seeds LibTorch's global generator with `init_seed` first, so two
// calls with the same seed build identical parameters (e.g. one replica per
// rank, as DDP's initial broadcast would give).
Model make_model(const std::string& name, const ModelShape& shape, uint64_t init_seed);

// Either kind of model. A TorchScript model starts from the file's own
// parameters whatever the seed (every replica alike, as DDP's broadcast
// makes them); its shape must be what the spec declares, and its forward
// must take [N, channels, height, width] and give [N, classes]. Throws
// std::invalid_argument naming the file and the problem.
Model make_model(const ModelSpec& spec, const ModelShape& shape, uint64_t init_seed);

}  // namespace st::model
