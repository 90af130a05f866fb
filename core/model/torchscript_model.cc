#include "core/model/torchscript_model.h"

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "core/model/model_backend.h"

namespace st::model {
namespace {

constexpr const char* kMetadataFile = "stellatrain.json";
constexpr int64_t kProbeBatch = 2;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::invalid_argument(fmt::format("{}: {}", path, problem));
}

// LibTorch's messages carry a C++ backtrace after the first line.
std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// The JIT's graph optimiser off for one forward, on whatever thread runs
// it (the setting is per thread in LibTorch 1.13): autograd then runs op by
// op, with no differentiable graphs that would release several layers'
// gradients at once, so each parameter is ready when its layer's backward
// ends (as in the zoo), and no profiling pass changes the arithmetic
// between iterations. Seen without it on a worker thread: from the second
// iteration on, the cnn's last layers became ready in another order.
struct Unoptimized {
  torch::jit::GraphOptimizerEnabledGuard guard{false};
};

class TorchScriptBackend final : public ModelBackend {
 public:
  explicit TorchScriptBackend(torch::jit::Module module) : module_(std::move(module)) {}
  at::Tensor forward(const at::Tensor& images) override {
    const Unoptimized unoptimized;
    return module_.forward({images}).toTensor();
  }
  std::vector<at::Tensor> parameters() const override {
    std::vector<at::Tensor> out;
    for (const auto& p : module_.parameters(/*recurse=*/true)) out.push_back(p);
    return out;
  }
  std::vector<NamedTensor> named_parameters() const override {
    std::vector<NamedTensor> out;
    for (const auto& p : module_.named_parameters(/*recurse=*/true)) out.push_back({p.name, p.value});
    return out;
  }
  std::vector<NamedTensor> named_buffers() const override {
    std::vector<NamedTensor> out;
    for (const auto& b : module_.named_buffers(/*recurse=*/true)) out.push_back({b.name, b.value});
    return out;
  }
  void train(bool training) override { module_.train(training); }
  bool is_training() const override { return module_.is_training(); }
  void zero_grad() override {
    for (auto p : module_.parameters(/*recurse=*/true)) {
      auto& grad = p.mutable_grad();
      if (!grad.defined()) continue;
      grad = grad.detach();
      grad.zero_();
    }
  }
  void to(const c10::Device& device) override { module_.to(device); }

 private:
  torch::jit::Module module_;
};

// One load per file and process (under the mutex); replicas are clones.
struct LoadedFile {
  std::filesystem::file_time_type modified;
  uintmax_t bytes = 0;
  torch::jit::Module module;
  std::string metadata;  // stellatrain.json, "" if absent
};
std::mutex cache_mutex;
std::map<std::string, LoadedFile> cache;

LoadedFile& loaded(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(path, "no such TorchScript file");
  const auto modified = std::filesystem::last_write_time(path, ec);
  const auto bytes = std::filesystem::file_size(path, ec);
  auto found = cache.find(path);
  if (found != cache.end()) {
    if (found->second.modified != modified || found->second.bytes != bytes)
      fail(path, "the file changed while this process was using it; start the run again");
    return found->second;
  }
  LoadedFile file{modified, bytes, {}, {}};
  torch::jit::ExtraFilesMap extra{{kMetadataFile, ""}};
  try {
    file.module = torch::jit::load(path, c10::nullopt, extra);
  } catch (const c10::Error& e) {
    fail(path, "not a TorchScript module saved with torch.jit.save (" + first_line(e.what_without_backtrace()) + ")");
  }
  file.metadata = extra[kMetadataFile];
  return cache[path] = std::move(file);
}

std::vector<int64_t> input_of(const nlohmann::json& j, const std::string& path) {
  if (!j.is_array() || j.size() != 3) fail(path, "stellatrain.json: \"input\" is not [channels, height, width]");
  std::vector<int64_t> input;
  for (const auto& v : j) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1)
      fail(path, "stellatrain.json: \"input\" holds a value that is not a positive integer");
    input.push_back(v.get<int64_t>());
  }
  return input;
}

void check_parameters(const torch::jit::Module& module, const std::string& path) {
  std::size_t count = 0;
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    ++count;
    if (p.value.scalar_type() != at::kFloat)
      fail(path, fmt::format("parameter {} is {}; the engine trains float32 parameters (model.float())", p.name,
                             c10::toString(p.value.scalar_type())));
    if (!p.value.requires_grad())
      fail(path, fmt::format("parameter {} does not require grad; every parameter is trained (make it a buffer)",
                             p.name));
    if (!p.value.is_contiguous()) fail(path, fmt::format("parameter {} is not contiguous", p.name));
  }
  if (count == 0) fail(path, "the module has no parameters (a frozen module, torch.jit.freeze, cannot train)");
}

// One forward of zeros on a clone (so a traced BatchNorm's statistics stay
// as the file has them).
void probe(const torch::jit::Module& module, const ModelShape& shape, const std::string& path) {
  torch::NoGradGuard no_grad;
  const Unoptimized unoptimized;
  torch::jit::Module copy = module.clone();
  copy.eval();
  const auto input = torch::zeros({kProbeBatch, shape.channels, shape.height, shape.width});
  c10::IValue out;
  try {
    out = copy.forward({input});
  } catch (const std::exception& e) {
    fail(path, fmt::format("forward of [{}, {}, {}, {}] failed: {}", kProbeBatch, shape.channels, shape.height,
                           shape.width, first_line(e.what())));
  }
  if (!out.isTensor()) fail(path, fmt::format("forward returns {}, not one tensor of logits", out.tagKind()));
  const auto sizes = out.toTensor().sizes().vec();
  if (sizes != std::vector<int64_t>{kProbeBatch, shape.classes})
    fail(path, fmt::format("forward of a batch of {} gives [{}], expected [{}, {}] ({} classes from the dataset)",
                           kProbeBatch, fmt::join(sizes, ", "), kProbeBatch, shape.classes, shape.classes));
}

}  // namespace

ModelSpec with_file_metadata(const ModelSpec& spec) {
  ModelSpec out = spec;
  std::string metadata;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    metadata = loaded(spec.torchscript).metadata;
  }
  if (metadata.empty()) return out;
  const std::string& path = spec.torchscript;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(metadata);
  } catch (const nlohmann::json::exception& e) {
    fail(path, fmt::format("stellatrain.json is not JSON ({})", e.what()));
  }
  if (!j.is_object()) fail(path, "stellatrain.json is not a JSON object");
  for (const auto& [key, value] : j.items())
    if (key != "input" && key != "classes" && key != "forward_flops")
      fail(path, fmt::format("stellatrain.json: unknown key \"{}\" (input, classes, forward_flops)", key));
  if (out.input.empty() && j.contains("input")) out.input = input_of(j["input"], path);
  if (out.classes == 0 && j.contains("classes")) {
    if (!j["classes"].is_number_integer() || j["classes"].get<int64_t>() < 2)
      fail(path, "stellatrain.json: \"classes\" is not an integer of at least 2");
    out.classes = j["classes"].get<int64_t>();
  }
  if (out.forward_flops == 0 && j.contains("forward_flops")) {
    if (!j["forward_flops"].is_number() || !(j["forward_flops"].get<double>() > 0))
      fail(path, "stellatrain.json: \"forward_flops\" is not a positive number");
    out.forward_flops = j["forward_flops"].get<double>();
  }
  return out;
}

Model load_torchscript_model(const ModelSpec& given, const ModelShape& shape) {
  const ModelSpec spec = with_file_metadata(given);
  const std::string& path = spec.torchscript;
  const std::vector<int64_t> dataset_input = {shape.channels, shape.height, shape.width};
  if (!spec.input.empty() && spec.input != dataset_input)
    fail(path, fmt::format("the model takes [{}] (channels, height, width) but the dataset's images are [{}]",
                           fmt::join(spec.input, ", "), fmt::join(dataset_input, ", ")));
  if (spec.classes != 0 && spec.classes != shape.classes)
    fail(path, fmt::format("the model has {} classes but the dataset has {}", spec.classes, shape.classes));
  torch::jit::Module replica;
  {
    std::lock_guard<std::mutex> lock(cache_mutex);
    const torch::jit::Module& module = loaded(path).module;
    check_parameters(module, path);
    probe(module, shape, path);
    // Cloned without autograd, so each parameter is a leaf of its own (a
    // clone under autograd would hang off the file's tensors), then made
    // trainable again.
    torch::NoGradGuard no_grad;
    replica = module.clone();
  }
  for (auto p : replica.parameters(/*recurse=*/true)) p.requires_grad_(true);
  replica.train(true);
  return Model(spec.name, shape, std::make_shared<TorchScriptBackend>(std::move(replica)));
}

// --- measured FLOPs ----------------------------------------------------------
//
// Counted here rather than by the profiler's own computeFlops
// (torch/csrc/profiler/util.h): in LibTorch 1.13 it knows conv2d, mm,
// addmm, bmm, baddbmm, add and mul, not linear, matmul, conv1d or conv3d;
// it counts elementwise adds and multiplies, which the zoo's hand count
// (core/model/flops.h) leaves out; and its saveExtraArgs reads an op's
// arguments from the front of RecordFunction::inputs(), which for an op
// called by the TorchScript interpreter is the interpreter's whole stack.

namespace {

// The record-function observer's state: callbacks are plain function
// pointers, so it is thread-local (the probe's forward runs on this thread).
struct FlopCount {
  std::unordered_map<const void*, std::size_t> parameter_of_storage;
  std::vector<double> flops;  // per parameter, for the whole probe batch
  std::size_t last_charged = 0;
  int depth = 0;  // inside a counted op: its own sub-ops are not counted again
};
thread_local FlopCount* counting = nullptr;

bool counted_op(const std::string& name) {
  static const char* const kOps[] = {"aten::conv1d",  "aten::conv2d", "aten::conv3d", "aten::convolution",
                                     "aten::_convolution", "aten::linear", "aten::addmm", "aten::mm",
                                     "aten::matmul",  "aten::bmm",    "aten::baddbmm"};
  for (const char* op : kOps)
    if (name == op) return true;
  return false;
}

// What the end of a counted op needs, read at its start: called boxed from
// the TorchScript interpreter, the inputs are a view of its stack, which
// the op's results have overwritten by the end.
struct Counted : at::ObserverContext {
  double flops_per_output = 0;  // 2 x the contracted size
  std::vector<const void*> storages;  // of the tensor inputs, to find the parameter
};

// The op's own arguments: called boxed, `inputs` is the whole interpreter
// stack, whose last num_inputs() values are the op's.
c10::ArrayRef<const c10::IValue> arguments(const at::RecordFunction& fn) {
  const auto inputs = fn.inputs();
  const std::size_t own = std::min(fn.num_inputs(), inputs.size());
  return inputs.slice(inputs.size() - own);
}

const at::Tensor* tensor_at(const at::RecordFunction& fn, std::size_t i) {
  const auto args = arguments(fn);
  return i < args.size() && args[i].isTensor() && args[i].toTensor().defined() ? &args[i].toTensor() : nullptr;
}

// Multiply-adds per output element x 2: a convolution's weight holds them
// per output channel, a linear layer's weight per row, a product contracts
// its left operand's last dimension.
double flops_per_output(const std::string& name, const at::RecordFunction& fn) {
  if (name.find("conv") != std::string::npos) {
    const at::Tensor* w = tensor_at(fn, 1);
    return w && w->dim() > 1 ? 2.0 * static_cast<double>(w->numel() / w->size(0)) : 0;
  }
  if (name == "aten::linear") {
    const at::Tensor* w = tensor_at(fn, 1);
    return w && w->dim() == 2 ? 2.0 * static_cast<double>(w->size(1)) : 0;
  }
  const std::size_t left = (name == "aten::addmm" || name == "aten::baddbmm") ? 1 : 0;
  const at::Tensor* a = tensor_at(fn, left);
  return a && a->dim() >= 1 ? 2.0 * static_cast<double>(a->size(-1)) : 0;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  if (!counting || !counted_op(fn.name())) return nullptr;
  if (counting->depth++ > 0) return nullptr;
  auto context = std::make_unique<Counted>();
  context->flops_per_output = flops_per_output(fn.name(), fn);
  for (const auto& value : arguments(fn))
    if (value.isTensor() && value.toTensor().defined())
      context->storages.push_back(value.toTensor().storage().unsafeGetStorageImpl());
  return context;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext* context) {
  if (!counting || !counted_op(fn.name())) return;
  --counting->depth;
  if (!context) return;
  const auto* counted = static_cast<const Counted*>(context);
  std::size_t charged = counting->last_charged;
  for (const void* storage : counted->storages) {
    const auto found = counting->parameter_of_storage.find(storage);
    if (found != counting->parameter_of_storage.end()) {
      charged = found->second;
      break;
    }
  }
  // The op's result is the last value (boxed calls record the stack).
  const auto& outputs = fn.outputs();
  if (outputs.empty() || !outputs.back().isTensor()) return;
  counting->flops[charged] += counted->flops_per_output * static_cast<double>(outputs.back().toTensor().numel());
  counting->last_charged = charged;
}

}  // namespace

std::vector<ParameterFlops> torchscript_parameter_flops(const ModelSpec& given, const ModelShape& shape) {
  const ModelSpec spec = with_file_metadata(given);
  const Model model = load_torchscript_model(spec, shape);
  const auto named = model.named_parameters();
  FlopCount count;
  count.flops.assign(named.size(), 0.0);
  for (std::size_t p = 0; p < named.size(); ++p)
    count.parameter_of_storage[named[p].tensor.storage().unsafeGetStorageImpl()] = p;
  {
    torch::NoGradGuard no_grad;
    model.set_training(false);
    at::RecordFunctionGuard enabled(true);
    const auto handle = at::addThreadLocalCallback(
        at::RecordFunctionCallback(on_start, on_end).needsInputs(true).needsOutputs(true));
    counting = &count;
    try {
      model.forward(torch::zeros({kProbeBatch, shape.channels, shape.height, shape.width}));
    } catch (...) {
      counting = nullptr;
      at::removeCallback(handle);
      throw;
    }
    counting = nullptr;
    at::removeCallback(handle);
  }
  double measured = 0;
  for (double& f : count.flops) measured += (f /= kProbeBatch);
  if (spec.forward_flops > 0) {
    if (measured > 0) {
      for (double& f : count.flops) f *= spec.forward_flops / measured;
    } else {
      double elements = 0;
      for (const auto& n : named) elements += static_cast<double>(n.tensor.numel());
      for (std::size_t p = 0; p < named.size(); ++p)
        count.flops[p] = spec.forward_flops * static_cast<double>(named[p].tensor.numel()) / elements;
    }
  } else if (measured == 0) {
    fail(spec.torchscript,
         "no convolution or matrix product was seen in its forward, so its FLOPs cannot be measured; declare them "
         "(model: {torchscript: FILE, flops: FORWARD_FLOPS_PER_SAMPLE})");
  }
  std::vector<ParameterFlops> out;
  for (std::size_t p = 0; p < named.size(); ++p) out.push_back({named[p].name, count.flops[p]});
  return out;
}

}  // namespace st::model
