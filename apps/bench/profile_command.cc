// Measures forward and backward time per model at a batch size (LibTorch on
// one CPU thread, as training runs here), and the rates of the kernels the
// engine charges per element: the gather (sum of worker gradients), a copy
// out of the master parameters, a read through their lookahead view (exact
// lazy momentum extrapolated one step ahead), thresholdv16 compression at
// several densities (its cost grows with the density), the sparse SGD step,
// the dense SGD step and exact top-k (the last two stand in for what runs on
// the accelerator when the profile describes a CPU-only node), and the cores
// the process may use. Medians over repetitions. `--update FILE` measures
// only these CPU figures again and keeps the file's models and accelerator.
// With --compute-device cuda the models, the dense step and top-k run on the
// GPU (timed to the device's completion, per-layer readiness by CUDA events),
// and the device-to-host and host-to-device copy rates of page-locked
// buffers are measured too (`transfer:`); the CPU kernels stay on the CPU.
#include "apps/bench/profile_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "apps/bench/median_timer.h"
#include "core/compress/compressor.h"
#include "core/device/compute_device.h"
#include "core/device/copy_engine.h"
#include "core/device/event_clock.h"
#include "core/device/torch_device.h"
#include "core/model/gradient_hooks.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/model/torchscript_model.h"
#include "core/optim/sparse_optimizer.h"
#include "core/runtime/cpu_cores.h"

namespace st::bench {
namespace {

struct ProfileOptions {
  std::vector<std::string> models{"mlp", "cnn", "resnet18", "vit"};
  int batch = 64;
  std::string device = "this-cpu";
  std::string compute_device = "cpu";
  std::vector<int> input;  // channels, height, width, classes for every model (default: each model's scenarios')
  std::string out;
  std::string update;  // a profile whose CPU figures to measure again
  double min_time_s = 0.2;
  int repetitions = 5;
};

struct ModelTimes {
  double forward_ms = 0, backward_ms = 0;
  std::vector<std::string> names;        // parameters, registration order
  std::vector<double> backward_ready_ms;  // when each one's gradient existed
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Per parameter, when backward had written its gradient (the hooks the
// engine itself uses, model/gradient_hooks.h), medians over repetitions;
// the sim's profile model releases each layer at that share of backward.
struct Readiness {
  double backward_ms = 0;            // loss.backward() alone, median
  std::vector<double> ready_ms;      // per parameter, median
};

// The CUDA device index of `on` (0 on the CPU, where it is not used).
int device_index(const device::ComputeDevice& on) { return on.is_cuda() ? device::torch_device(on).index() : 0; }

Readiness time_readiness(const model::Model& m, const torch::Tensor& images, const torch::Tensor& labels,
                         int repetitions, const device::ComputeDevice& on) {
  const std::size_t params = m.parameters().size();
  std::vector<std::vector<double>> samples(params);
  std::vector<double> whole;
  const auto clock = device::make_event_clock(on, device_index(on));
  model::GradientReadyHooks hooks(m, [&](std::size_t p) { clock->mark(p); });
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    m.zero_grad();
    const auto loss = torch::nn::functional::cross_entropy(m.forward(images), labels);
    device::synchronize(on, device_index(on));
    clock->start();
    loss.backward();
    const auto times = clock->finish();
    whole.push_back(times.end_ms);
    for (std::size_t p = 0; p < params && p < times.marks_ms.size(); ++p)
      if (times.marks_ms[p] >= 0) samples[p].push_back(times.marks_ms[p]);
  }
  Readiness out;
  out.backward_ms = median(whole);
  for (auto& s : samples) out.ready_ms.push_back(std::min(median(s), out.backward_ms));
  return out;
}

// A --models entry: a zoo name, a TorchScript file (named by its stem) or
// NAME=FILE; the name keys the profile's `models:` entry.
model::ModelSpec spec_of(const std::string& entry) {
  const auto names = model::model_names();
  if (std::find(names.begin(), names.end(), entry) != names.end()) return model::zoo_model(entry);
  const auto equals = entry.find('=');
  model::ModelSpec spec;
  spec.torchscript = equals == std::string::npos ? entry : entry.substr(equals + 1);
  spec.name = equals == std::string::npos ? std::filesystem::path(entry).stem().string() : entry.substr(0, equals);
  if (!std::filesystem::is_regular_file(spec.torchscript))
    throw std::invalid_argument(fmt::format("--models: '{}' is neither a zoo model ({}) nor a TorchScript file",
                                            entry, fmt::join(names, ", ")));
  return model::with_file_metadata(spec);
}

// The inputs each model is profiled at: what its scenarios train on.
model::ModelShape profile_shape(const std::string& name) {
  if (name == "resnet50" || name == "resnet152" || name == "vit-b16") return {3, 224, 224, 100};  // ImageNet-100
  if (name == "resnet18" || name == "vit") return {3, 32, 32, 10};                                // CIFAR-10
  return {1, 28, 28, 10};                                                                          // Fashion-MNIST
}

// --input, else what a TorchScript file says of itself, else the zoo
// model's scenarios' shape.
model::ModelShape shape_for(const model::ModelSpec& spec, const std::vector<int>& input) {
  if (!input.empty()) return {input[0], input[1], input[2], input[3]};
  if (!spec.is_torchscript()) return profile_shape(spec.name);
  if (spec.input.size() != 3 || spec.classes == 0)
    throw std::invalid_argument(fmt::format(
        "{}: the file does not say its input and classes (stellatrain.json); give --input C,H,W,CLASSES",
        spec.torchscript));
  return {spec.input[0], spec.input[1], spec.input[2], spec.classes};
}

ModelTimes time_model(const model::ModelSpec& spec, int batch, const TimerOptions& timer,
                      const device::ComputeDevice& on, const std::vector<int>& input) {
  const model::ModelShape shape = shape_for(spec, input);
  const auto m = model::make_model(spec, shape, 1);
  const auto where = device::torch_device(on);
  if (on.is_cuda()) m.to(where);
  const auto images = torch::randn({batch, shape.channels, shape.height, shape.width}).to(where);
  const auto labels = torch::randint(0, shape.classes, {batch}, torch::kLong).to(where);
  MedianTimer t(timer);
  // Each timed call ends when the device has finished it.
  t.add("forward", [&] {
    torch::NoGradGuard no_grad;
    (void)m.forward(images);
    device::synchronize(on, device_index(on));
  });
  t.add("forward_backward", [&] {
    m.zero_grad();
    torch::nn::functional::cross_entropy(m.forward(images), labels).backward();
    device::synchronize(on, device_index(on));
  });
  const auto ms = t.run();
  ModelTimes out;
  // backward alone is timed directly (the difference of two medians goes
  // negative on a loaded machine); forward takes the rest of a training
  // step, so that forward + backward is what one step costs.
  const Readiness readiness = time_readiness(m, images, labels, timer.repetitions, on);
  out.backward_ms = readiness.backward_ms;
  out.forward_ms = std::max(ms.at("forward"), ms.at("forward_backward") - readiness.backward_ms);
  for (const auto& p : m.named_parameters()) out.names.push_back(p.name);
  out.backward_ready_ms = readiness.ready_ms;
  if (!(out.forward_ms > 0) || !(out.backward_ms > 0))
    throw std::runtime_error(fmt::format("profile: {}: measured forward {:.3f} ms, backward {:.3f} ms: the machine is "
                                         "too busy to time it; rerun when it is idle",
                                         spec.name, out.forward_ms, out.backward_ms));
  return out;
}

// The densities the compressor is timed at: the controller's range, from
// its floor to half the gradient.
constexpr double kCompressDensities[] = {0.001, 0.01, 0.05, 0.2, 0.5};

struct KernelNs {
  double gather = 0, copy = 0, view = 0, optimize_index = 0, optimize_dense = 0, topk = 0;
  std::vector<std::pair<double, double>> compress;  // (density, ns per scanned element)
};

constexpr std::size_t kKernelElements = 4 << 20;

std::vector<float> normal_values(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> out(n);
  for (auto& v : out) v = normal(rng);
  return out;
}

// thresholdv16 on the same gradient at each density.
std::vector<std::pair<double, double>> time_compression(const TimerOptions& timer, const std::vector<float>& grad) {
  auto compressor = compress::make_compressor("thresholdv16", {simd::default_level(), 1});
  std::vector<std::pair<double, double>> out;
  for (const double density : kCompressDensities) {
    const std::size_t k = compress::k_for_density(grad.size(), density);
    auto state = compressor->make_state(grad.size(), k, "profile");
    compress::SparseChunk chunk;
    chunk.reserve(compressor->max_output(grad.size(), k));
    MedianTimer t(timer);
    t.add("compress", [&] { chunk.count = compressor->compress(Span<const float>(grad), k, *state, chunk.buffers()); });
    out.emplace_back(density, t.run().at("compress") * 1e6 / static_cast<double>(grad.size()));
  }
  return out;
}

// A read of the master parameters through their view: exact lazy momentum
// after a sparse step at 5%, extrapolated one step ahead (the lookahead's
// weight prediction), which is what a stale forward's load reads.
double time_view(const TimerOptions& timer, const std::vector<float>& grad) {
  const std::size_t n = grad.size();
  auto sgd = optim::make_sparse_sgd({0.01, 0.9, 0.0, false, 0.0, optim::LazyMomentum::kExact});
  auto state = sgd->make_state(n, "profile-view");
  std::vector<float> params(n), out(n);
  std::vector<uint32_t> indices;
  std::vector<float> values;
  for (std::size_t i = 0; i < n; i += 20) {
    indices.push_back(static_cast<uint32_t>(i));
    values.push_back(grad[i]);
  }
  for (int step = 0; step < 3; ++step)
    sgd->step(Span<float>(params), {Span<const uint32_t>(indices), Span<const float>(values)}, *state);
  MedianTimer t(timer);
  t.add("view", [&] { sgd->extrapolate(Span<const float>(params), *state, 1, Span<float>(out)); });
  return t.run().at("view") * 1e6 / static_cast<double>(n);
}

KernelNs time_kernels(const TimerOptions& timer) {
  constexpr std::size_t n = kKernelElements;
  constexpr double density = 0.05;
  const std::vector<float> grad = normal_values(n);
  std::vector<float> sum(n), params(n), copy(n);
  const std::size_t k = compress::k_for_density(n, density);
  auto compressor = compress::make_compressor("thresholdv16", {simd::default_level(), 1});
  auto state = compressor->make_state(n, k, "profile");
  compress::SparseChunk chunk;
  chunk.reserve(compressor->max_output(n, k));
  chunk.count = compressor->compress(Span<const float>(grad), k, *state, chunk.buffers());
  auto sgd = optim::make_sparse_sgd({0.01, 0.9, 0.0, false, 0.0});
  auto sgd_state = sgd->make_state(n, "profile");
  std::vector<uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<uint32_t>(i);
  const auto tensor = torch::from_blob(const_cast<float*>(grad.data()), {static_cast<int64_t>(n)});
  MedianTimer t(timer);
  t.add("gather", [&] {
    for (std::size_t i = 0; i < n; ++i) sum[i] += grad[i];
  });
  // What a load's read out of the master is (VersionedParameters::read_layer).
  t.add("copy", [&] { std::copy(grad.begin(), grad.end(), copy.begin()); });
  t.add("dense_step", [&] {
    sgd->step(Span<float>(params), {Span<const uint32_t>(all), Span<const float>(grad)}, *sgd_state);
  });
  t.add("topk", [&] { (void)torch::topk(tensor.abs(), static_cast<int64_t>(k)); });
  auto ms = t.run();
  // The sparse step at 5%: the indices the compressor chose.
  MedianTimer sparse(timer);
  sparse.add("sparse_step", [&] {
    sgd->step(Span<float>(params),
              {Span<const uint32_t>(chunk.indices.data(), chunk.count), Span<const float>(chunk.values.data(), chunk.count)},
              *sgd_state);
  });
  const double sparse_ms = sparse.run().at("sparse_step");
  const double per_element = 1e6 / static_cast<double>(n);
  KernelNs out;
  out.gather = ms.at("gather") * per_element;
  out.copy = ms.at("copy") * per_element;
  out.view = time_view(timer, grad);
  out.compress = time_compression(timer, grad);
  out.optimize_index = sparse_ms * 1e6 / static_cast<double>(std::max<std::size_t>(1, chunk.count));
  out.optimize_dense = ms.at("dense_step") * per_element;
  out.topk = ms.at("topk") * per_element;
  return out;
}

// On a GPU: the dense SGD step (momentum, as torch's SGD) and exact top-k
// on 4M elements in device memory, per element.
struct DeviceKernelNs {
  double optimize_dense = 0, topk = 0;
};

DeviceKernelNs time_device_kernels(const TimerOptions& timer, const device::ComputeDevice& on) {
  constexpr int64_t n = 4 << 20;
  const auto where = device::torch_device(on);
  const auto grad = torch::randn({n}).to(where);
  auto params = torch::zeros({n}).to(where);
  auto velocity = torch::zeros({n}).to(where);
  const int64_t k = static_cast<int64_t>(compress::k_for_density(static_cast<std::size_t>(n), 0.05));
  MedianTimer t(timer);
  t.add("dense_step", [&] {
    velocity.mul_(0.9).add_(grad);
    params.add_(velocity, -0.01);
    device::synchronize(on, device_index(on));
  });
  t.add("topk", [&] {
    (void)torch::topk(grad.abs(), k);
    device::synchronize(on, device_index(on));
  });
  const auto ms = t.run();
  const double per_element = 1e6 / static_cast<double>(n);
  return {ms.at("dense_step") * per_element, ms.at("topk") * per_element};
}

// Device-to-host and host-to-device copy rates of 64 MiB between device
// memory and page-locked host memory, through the engine's own copy engine.
struct TransferGbps {
  double d2h = 0, h2d = 0;
};

TransferGbps time_transfers(const TimerOptions& timer, const device::ComputeDevice& on) {
  constexpr std::size_t n = 16 << 20;  // floats: 64 MiB
  auto engine = device::make_cuda_copy_engine(device_index(on));
  const auto host = engine->host_buffer(n);
  const auto dev = torch::randn({static_cast<int64_t>(n)}).to(device::torch_device(on));
  MedianTimer t(timer);
  t.add("d2h", [&] {
    engine->follow_compute();
    engine->copy(dev, host);
    engine->mark()->wait();
  });
  t.add("h2d", [&] {
    engine->copy(host, dev);
    engine->mark()->wait();
  });
  const auto ms = t.run();
  const double bytes = 4.0 * static_cast<double>(n);
  return {bytes / (ms.at("d2h") * 1e6), bytes / (ms.at("h2d") * 1e6)};  // GB/s
}

// The CPU figures (the `cpu:` map) and the cores, as the compute model reads
// them (sim/compute_model.cc).
void emit_cpu(YAML::Emitter& out, const KernelNs& k) {
  out << YAML::Key << "cpu_cores" << YAML::Value << runtime::available_cpu_cores();
  out << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gather_ns_per_element" << YAML::Value << k.gather;
  out << YAML::Key << "copy_ns_per_element" << YAML::Value << k.copy;
  out << YAML::Key << "view_ns_per_element" << YAML::Value << k.view;
  out << YAML::Key << "compress_ns_per_element_at_density" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [density, ns] : k.compress) out << YAML::Key << fmt::format("{:g}", density) << YAML::Value << ns;
  out << YAML::EndMap;
  out << YAML::Key << "optimize_ns_per_index" << YAML::Value << k.optimize_index << YAML::EndMap;
}

void write_profile(const std::string& path, const std::string& text) {
  if (path.empty()) {
    fmt::print("{}", text);
    return;
  }
  std::ofstream file(path);
  if (!(file << text)) throw std::runtime_error(fmt::format("{}: cannot write the profile", path));
  spdlog::info("profile: wrote {}", path);
}

constexpr const char* kHeader = "# Compute profile (format: docs/sim.md).\n";

// --update: the file's own keys in its order, the CPU figures measured
// again, everything else (models, accelerator, transfer) as it was; the
// comment lines at its top are kept.
int update_profile(const ProfileOptions& o, const std::string& command_line, const TimerOptions& timer) {
  YAML::Node old;
  try {
    old = YAML::LoadFile(o.update);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", o.update, e.what()));
  }
  if (!old.IsMap() || !old["models"])
    throw std::runtime_error(fmt::format("{}: not a compute profile (no models: map)", o.update));
  std::ifstream in(o.update);
  std::string header, line;
  while (std::getline(in, line) && line.rfind('#', 0) == 0) header += line + "\n";
  spdlog::info("profile: timing the CPU kernels again for {}", o.update);
  const KernelNs k = time_kernels(timer);
  YAML::Emitter out;
  out.SetDoublePrecision(5);
  out << YAML::BeginMap;
  bool cpu_written = false;
  for (const auto& entry : old) {
    const auto key = entry.first.as<std::string>();
    if (key == "cpu" || key == "cpu_cores" || key == "kernels_measured_with") continue;
    if (key == "accelerator" && !cpu_written) {
      out << YAML::Key << "kernels_measured_with" << YAML::Value << command_line;
      emit_cpu(out, k);
      cpu_written = true;
    }
    out << YAML::Key << key << YAML::Value << entry.second;
  }
  if (!cpu_written) {
    out << YAML::Key << "kernels_measured_with" << YAML::Value << command_line;
    emit_cpu(out, k);
  }
  out << YAML::EndMap;
  write_profile(o.out.empty() ? o.update : o.out, (header.empty() ? std::string(kHeader) : header) + out.c_str() + "\n");
  return 0;
}

int run_profile(const ProfileOptions& o, const std::string& command_line) {
  const auto on = device::parse_compute_device(o.compute_device);
  device::require_available(on);
  model::ThreadCountGuard one_thread(1);
  const TimerOptions timer{o.min_time_s, o.repetitions};
  if (!o.update.empty()) return update_profile(o, command_line, timer);
  YAML::Emitter out;
  out.SetDoublePrecision(5);
  out << YAML::BeginMap;
  out << YAML::Key << "device" << YAML::Value << o.device;
  out << YAML::Key << "measured_with" << YAML::Value << command_line;
  out << YAML::Key << "compute_device" << YAML::Value << on.str();
  spdlog::info("profile: timing kernels (gather, copy, view, thresholdv16 at {} densities, sparse and dense SGD, top-k)",
               std::size(kCompressDensities));
  KernelNs k = time_kernels(timer);
  if (on.is_cuda()) {
    spdlog::info("profile: timing the dense SGD step and top-k on {}", on.str());
    const DeviceKernelNs d = time_device_kernels(timer, on);
    k.optimize_dense = d.optimize_dense;
    k.topk = d.topk;
  }
  emit_cpu(out, k);
  out << YAML::Key << "accelerator" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "optimize_dense_ns_per_element" << YAML::Value << k.optimize_dense;
  out << YAML::Key << "compress_gpu_ns_per_element" << YAML::Value << k.topk << YAML::EndMap;
  if (on.is_cuda()) {
    spdlog::info("profile: timing device-to-host and host-to-device copies (64 MiB, page-locked)");
    const TransferGbps rates = time_transfers(timer, on);
    out << YAML::Key << "transfer" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "d2h_gbps" << YAML::Value << rates.d2h;
    out << YAML::Key << "h2d_gbps" << YAML::Value << rates.h2d << YAML::EndMap;
  }
  out << YAML::Key << "models" << YAML::Value << YAML::BeginMap;
  for (const auto& entry : o.models) {
    const model::ModelSpec spec = spec_of(entry);
    spdlog::info("profile: timing {} forward and backward at batch {}", spec.name, o.batch);
    const ModelTimes m = time_model(spec, o.batch, timer, on, o.input);
    out << YAML::Key << spec.name << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "batch" << YAML::Value << o.batch;
    out << YAML::Key << "forward_ms" << YAML::Value << m.forward_ms;
    out << YAML::Key << "backward_ms" << YAML::Value << m.backward_ms;
    out << YAML::Key << "layers" << YAML::Value << YAML::Block << YAML::BeginSeq;
    for (std::size_t p = 0; p < m.names.size(); ++p) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << m.names[p];
      out << YAML::Key << "backward_ready_ms" << YAML::Value << m.backward_ready_ms[p] << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndMap << YAML::EndMap;
  write_profile(o.out, std::string(kHeader) + out.c_str() + "\n");
  return 0;
}

}  // namespace

void add_profile_command(CLI::App& bench) {
  auto options = std::make_shared<ProfileOptions>();
  auto* cmd = bench.add_subcommand("profile", "Measure this machine's compute rates; write a compute profile (YAML)");
  cmd->add_option("--models", options->models,
                  "Models to time: zoo names, TorchScript files (named by their stem) or NAME=FILE")
      ->delimiter(',');
  cmd->add_option("--batch", options->batch, "Per-worker batch size")->check(CLI::PositiveNumber);
  cmd->add_option("--device", options->device, "Name of the device this profile describes");
  cmd->add_option("--compute-device", options->compute_device, "Where to run the models: cpu, cuda or cuda:N")
      ->capture_default_str();
  cmd->add_option("--input", options->input,
                  "C,H,W,CLASSES for every model (default: each model's scenarios', e.g. 1,28,28,10 for the CNN)")
      ->delimiter(',')
      ->expected(4)
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", options->out, "Write the profile here (default: stdout, or the --update file)");
  cmd->add_option("--update", options->update,
                  "Measure only the CPU kernels and cores again and rewrite this profile's cpu: figures, keeping its "
                  "models, accelerator and transfer")
      ->check(CLI::ExistingFile);
  cmd->add_option("--min-time", options->min_time_s, "Minimum seconds per repetition")->check(CLI::PositiveNumber);
  cmd->add_option("--repetitions", options->repetitions, "Repetitions; the median is kept")->check(CLI::Range(1, 1000));
  cmd->callback([options] {
    std::string line = fmt::format("stellatrain bench profile --models {} --batch {} --device {}",
                                   fmt::join(options->models, ","), options->batch, options->device);
    if (options->compute_device != "cpu") line += " --compute-device " + options->compute_device;
    if (!options->input.empty()) line += fmt::format(" --input {}", fmt::join(options->input, ","));
    if (!options->update.empty()) line = "stellatrain bench profile --update " + options->update;
    if (options->repetitions != ProfileOptions{}.repetitions) line += fmt::format(" --repetitions {}", options->repetitions);
    if (options->min_time_s != ProfileOptions{}.min_time_s) line += fmt::format(" --min-time {}", options->min_time_s);
    const int rc = run_profile(*options, line);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace st::bench
