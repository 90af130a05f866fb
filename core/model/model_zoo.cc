// The factory and the Model handle around a ModelBackend: the zoo's
// modules here, TorchScript files in torchscript_model.cc.
#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "core/model/architectures.h"
#include "core/model/model.h"
#include "core/model/model_backend.h"
#include "core/model/torchscript_model.h"
#include "core/model/zoo_module.h"

namespace st::model {
namespace {

using Builder = std::shared_ptr<ZooModule> (*)(const ModelShape&);

struct ZooEntry {
  const char* name;
  Builder build;
};

// A zoo member: an nn::Module with a forward.
class ZooBackend final : public ModelBackend {
 public:
  explicit ZooBackend(std::shared_ptr<ZooModule> module) : module_(std::move(module)) {}
  at::Tensor forward(const at::Tensor& images) override { return module_->forward(images); }
  std::vector<at::Tensor> parameters() const override { return module_->parameters(); }
  std::vector<NamedTensor> named_parameters() const override {
    std::vector<NamedTensor> named;
    for (const auto& item : module_->named_parameters()) named.push_back({item.key(), item.value()});
    return named;
  }
  std::vector<NamedTensor> named_buffers() const override {
    std::vector<NamedTensor> named;
    for (const auto& item : module_->named_buffers()) named.push_back({item.key(), item.value()});
    return named;
  }
  void train(bool training) override { module_->train(training); }
  bool is_training() const override { return module_->is_training(); }
  void zero_grad() override { module_->zero_grad(); }
  void to(const c10::Device& device) override { module_->to(device); }

 private:
  std::shared_ptr<ZooModule> module_;
};

constexpr ZooEntry kZoo[] = {
    {"mlp", build_mlp},
    {"cnn", build_cnn},
    {"resnet18", build_resnet18},
    {"vit", build_vit},
    {"resnet50", build_resnet50},
    {"resnet152", build_resnet152},
    {"vit-b16", build_vit_b16},
};

}  // namespace

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const ZooEntry& entry : kZoo) names.emplace_back(entry.name);
  return names;
}

Model make_model(const std::string& name, const ModelShape& shape) {
  for (const ZooEntry& entry : kZoo) {
    if (name == entry.name) {
      check_model_shape(name, shape);
      return Model(name, shape, std::make_shared<ZooBackend>(entry.build(shape)));
    }
  }
  throw std::invalid_argument(
      fmt::format("unknown model '{}'; known models: {}", name, fmt::join(model_names(), ", ")));
}

Model make_model(const std::string& name, const ModelShape& shape, uint64_t init_seed) {
  torch::manual_seed(init_seed);
  return make_model(name, shape);
}

Model make_model(const ModelSpec& spec, const ModelShape& shape, uint64_t init_seed) {
  if (spec.is_torchscript()) return load_torchscript_model(spec, shape);
  return make_model(spec.name, shape, init_seed);
}

Model::Model(std::string name, ModelShape shape, std::shared_ptr<ModelBackend> backend)
    : name_(std::move(name)), shape_(shape), backend_(std::move(backend)) {
  if (!backend_) throw std::invalid_argument("Model '" + name_ + "' needs a module");
}

at::Tensor Model::forward(const at::Tensor& images) const {
  const bool matches = images.dim() == 4 && images.size(1) == shape_.channels &&
                       images.size(2) == shape_.height && images.size(3) == shape_.width;
  if (!matches) {
    throw std::invalid_argument(fmt::format("model '{}' expects input [batch, {}, {}, {}], got {}",
                                            name_, shape_.channels, shape_.height, shape_.width,
                                            fmt::join(images.sizes(), "x")));
  }
  return backend_->forward(images);
}

std::vector<at::Tensor> Model::parameters() const { return backend_->parameters(); }

std::vector<NamedTensor> Model::named_parameters() const { return backend_->named_parameters(); }
std::vector<NamedTensor> Model::named_buffers() const { return backend_->named_buffers(); }

int64_t Model::parameter_count() const {
  int64_t count = 0;
  for (const at::Tensor& parameter : backend_->parameters()) count += parameter.numel();
  return count;
}

void Model::set_training(bool training) const { backend_->train(training); }
bool Model::is_training() const { return backend_->is_training(); }
void Model::zero_grad() const { backend_->zero_grad(); }
void Model::to(const c10::Device& device) const { backend_->to(device); }


}  // namespace st::model
