// Measures forward and backward time per model at a batch size (LibTorch on
// one CPU thread, as training runs here), and the rates of the kernels the
// engine charges per element: the gather (sum of worker gradients), a copy
// out of the master parameters, a read through their lookahead view (exact
// lazy momentum extrapolated one step ahead), each compressor's selection
// at several densities (its cost grows with the density; thresholdv16's
// and, beside it, thresholdv's, topk's and randomk's), the sparse SGD step,
// the dense SGD step and exact top-k (the last two stand in for what runs on
// the accelerator when the profile describes a CPU-only node), and the cores
// the process may use (the timing itself: profile_kernels.cc). Medians over
// repetitions. `--update FILE` measures only these CPU figures again and
// keeps the file's models and accelerator; `--update FILE --compressors`
// adds only the compressors' curves beside thresholdv16's.
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

#include "apps/bench/median_timer.h"
#include "apps/bench/profile_kernels.h"
#include "core/device/compute_device.h"
#include "core/device/event_clock.h"
#include "core/device/torch_device.h"
#include "core/model/gradient_hooks.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/model/torchscript_model.h"
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
  bool compressors_only = false;  // with update: only the other compressors' curves
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

// The CPU figures (the `cpu:` map) and the cores, as the compute model reads
// them (sim/compute_model.cc).
constexpr const char* kCurvesByCompressor = "compress_ns_per_element_at_density_by_compressor";

void emit_curve(YAML::Emitter& out, const CompressCurve& curve) {
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [density, ns] : curve) out << YAML::Key << fmt::format("{:g}", density) << YAML::Value << ns;
  out << YAML::EndMap;
}

void emit_other_compressors(YAML::Emitter& out, const std::vector<std::pair<std::string, CompressCurve>>& others) {
  out << YAML::Key << kCurvesByCompressor << YAML::Value << YAML::BeginMap;
  for (const auto& [name, curve] : others) {
    out << YAML::Key << name << YAML::Value;
    emit_curve(out, curve);
  }
  out << YAML::EndMap;
}

// Each compressor's cost against thresholdv16's, measured side by side:
// what a profile without its curve would misprice.
void log_against_thresholdv16(const CompressCurve& thresholdv16,
                              const std::vector<std::pair<std::string, CompressCurve>>& others) {
  for (const auto& [name, curve] : others) {
    std::vector<std::string> ratios;
    for (std::size_t i = 0; i < curve.size() && i < thresholdv16.size(); ++i)
      ratios.push_back(fmt::format("{:g}: {:.2f}x", curve[i].first, curve[i].second / thresholdv16[i].second));
    spdlog::info("profile: {} against thresholdv16 by density: {}", name, fmt::join(ratios, ", "));
  }
}

void emit_cpu(YAML::Emitter& out, const KernelNs& k) {
  out << YAML::Key << "cpu_cores" << YAML::Value << runtime::available_cpu_cores();
  out << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "gather_ns_per_element" << YAML::Value << k.gather;
  out << YAML::Key << "copy_ns_per_element" << YAML::Value << k.copy;
  out << YAML::Key << "view_ns_per_element" << YAML::Value << k.view;
  out << YAML::Key << "compress_ns_per_element_at_density" << YAML::Value;
  emit_curve(out, k.compress);
  emit_other_compressors(out, k.other_compressors);
  out << YAML::Key << "optimize_ns_per_index" << YAML::Value << k.optimize_index << YAML::EndMap;
  log_against_thresholdv16(k.compress, k.other_compressors);
}

// --update FILE --compressors: the file's cpu: map as it was, with the
// curves of the compressors other than thresholdv16 measured now (the
// file's thresholdv16 curve is timed again only to log the ratios).
void emit_cpu_with_new_curves(YAML::Emitter& out, const YAML::Node& old_cpu, const CompressorCurves& curves) {
  out << YAML::Key << "cpu" << YAML::Value << YAML::BeginMap;
  for (const auto& entry : old_cpu) {
    const auto key = entry.first.as<std::string>();
    if (key == kCurvesByCompressor) continue;
    out << YAML::Key << key << YAML::Value << entry.second;
    if (key == "compress_ns_per_element_at_density" || key == "compress_ns_per_element")
      emit_other_compressors(out, curves.others);
  }
  out << YAML::EndMap;
  log_against_thresholdv16(curves.thresholdv16, curves.others);
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

// An --update's result: to --out, else over the file; its comment lines
// kept (the standard header where it had none).
void write_updated_profile(const ProfileOptions& o, const std::string& header, const YAML::Emitter& out) {
  write_profile(o.out.empty() ? o.update : o.out, (header.empty() ? std::string(kHeader) : header) + out.c_str() + "\n");
}

int add_compressor_curves(const ProfileOptions& o, const YAML::Node& old, const std::string& header,
                          const std::string& command_line, const TimerOptions& timer) {
  if (!old["cpu"] || !old["cpu"].IsMap())
    throw std::runtime_error(fmt::format("{}: no cpu: map to add the compressors' curves to", o.update));
  spdlog::info("profile: timing thresholdv16 and {} at {} densities for {}", compress::joined_names(compress::compressors_with_own_curves()),
               std::size(kCompressDensities), o.update);
  const CompressorCurves curves = time_compressor_curves(timer);
  YAML::Emitter out;
  out.SetDoublePrecision(5);
  out << YAML::BeginMap;
  for (const auto& entry : old) {
    const auto key = entry.first.as<std::string>();
    if (key == "compressors_measured_with") continue;
    if (key == "cpu") {
      out << YAML::Key << "compressors_measured_with" << YAML::Value << command_line;
      emit_cpu_with_new_curves(out, entry.second, curves);
      continue;
    }
    out << YAML::Key << key << YAML::Value << entry.second;
  }
  out << YAML::EndMap;
  write_updated_profile(o, header, out);
  return 0;
}

// --update: the file's own keys in its order, the CPU figures measured
// again (with --compressors only the other compressors' curves),
// everything else (models, accelerator, transfer) as it was; the comment
// lines at its top are kept.
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
  if (o.compressors_only) return add_compressor_curves(o, old, header, command_line, timer);
  spdlog::info("profile: timing the CPU kernels again for {}", o.update);
  const KernelNs k = time_kernels(timer);
  YAML::Emitter out;
  out.SetDoublePrecision(5);
  out << YAML::BeginMap;
  bool cpu_written = false;
  for (const auto& entry : old) {
    const auto key = entry.first.as<std::string>();
    // Every CPU figure is now of one session: an earlier session's
    // compressor curves go with the rest.
    if (key == "cpu" || key == "cpu_cores" || key == "kernels_measured_with" || key == "compressors_measured_with")
      continue;
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
  write_updated_profile(o, header, out);
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
  spdlog::info("profile: timing kernels (gather, copy, view, thresholdv16 and {} at {} densities, sparse and dense "
               "SGD, top-k)",
               compress::joined_names(compress::compressors_with_own_curves()), std::size(kCompressDensities));
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
  cmd->add_flag("--compressors", options->compressors_only,
                "With --update: add (or measure again) only the curves of the compressors other than thresholdv16 "
                "(thresholdv, topk, randomk), keeping every other figure of the file")
      ->needs("--update");
  cmd->add_option("--min-time", options->min_time_s, "Minimum seconds per repetition")->check(CLI::PositiveNumber);
  cmd->add_option("--repetitions", options->repetitions, "Repetitions; the median is kept")->check(CLI::Range(1, 1000));
  cmd->callback([options] {
    std::string line = fmt::format("stellatrain bench profile --models {} --batch {} --device {}",
                                   fmt::join(options->models, ","), options->batch, options->device);
    if (options->compute_device != "cpu") line += " --compute-device " + options->compute_device;
    if (!options->input.empty()) line += fmt::format(" --input {}", fmt::join(options->input, ","));
    if (!options->update.empty()) line = "stellatrain bench profile --update " + options->update;
    if (options->compressors_only) line += " --compressors";
    if (options->repetitions != ProfileOptions{}.repetitions) line += fmt::format(" --repetitions {}", options->repetitions);
    if (options->min_time_s != ProfileOptions{}.min_time_s) line += fmt::format(" --min-time {}", options->min_time_s);
    const int rc = run_profile(*options, line);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace st::bench
