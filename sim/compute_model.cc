#include "sim/compute_model.h"

#include <fmt/format.h>

#include <filesystem>

#include <algorithm>

#include <cmath>
#include <stdexcept>

#include "core/model/flops.h"
#include "core/util/yaml_fields.h"

namespace st::sim {
namespace {

using runtime::ComputeCost;
using runtime::Nanos;

Nanos from_ms(double ms) { return Nanos(static_cast<int64_t>(std::llround(ms * 1e6))); }
Nanos from_ns(double ns) { return Nanos(static_cast<int64_t>(std::llround(ns))); }

[[noreturn]] void unknown_kind(const ComputeCost& task, const char* model) {
  throw std::invalid_argument(fmt::format("{} compute-time model: unknown task kind '{}'", model, task.kind));
}

// Evaluation is a measurement of the run, not part of it: it costs no
// virtual time under any model (on real runs it shares the CPU).
bool is_free(const ComputeCost& task) { return task.kind == "evaluate"; }

class MeasuredModel final : public ComputeTimeModel {
 public:
  explicit MeasuredModel(double scale) : scale_(scale) {
    if (!(scale > 0) || !std::isfinite(scale))
      throw std::invalid_argument(fmt::format("compute.scale: must be a positive number, got {}", scale));
  }
  Nanos cost(const ComputeCost& task, Nanos measured) const override {
    if (is_free(task)) return Nanos::zero();
    return Nanos(static_cast<int64_t>(std::llround(static_cast<double>(measured.count()) * scale_)));
  }
  // Where the mark really came in the work (wall clock).
  double progress_share(const ComputeCost&, int, double measured_share) const override { return measured_share; }
  bool deterministic() const override { return false; }
  nlohmann::json describe() const override { return {{"kind", "measured"}, {"scale", scale_}}; }

 private:
  double scale_;
};

// Per-kind rates shared by the profile and analytic models.
struct KernelRates {
  double forward_ms_per_sample = 0, backward_ms_per_sample = 0;
  double gather_ns_per_element = 0, compress_ns_per_element = 0, optimize_ns_per_index = 0;
  double optimize_dense_ns_per_element = 0, compress_gpu_ns_per_element = 0;
  // ddp-powersgd's matrix products and error feedback (work: bytes moved
  // through device memory; memory-bound, see ddp_hook_systems.cc): at the
  // dense step's bandwidth, which moves 16 bytes per element.
  double powersgd_ns_per_byte() const { return optimize_dense_ns_per_element / 16; }

  Nanos cost(const ComputeCost& task, const char* model) const {
    if (is_free(task)) return Nanos::zero();
    if (task.kind == "forward") return from_ms(forward_ms_per_sample * task.work);
    if (task.kind == "backward") return from_ms(backward_ms_per_sample * task.work);
    if (task.kind == "gather") return from_ns(gather_ns_per_element * task.work);
    if (task.kind == "compress") return from_ns(compress_ns_per_element * task.work);
    if (task.kind == "optimize") return from_ns(optimize_ns_per_index * task.work);
    if (task.kind == "optimize_dense") return from_ns(optimize_dense_ns_per_element * task.work);
    if (task.kind == "compress_gpu") return from_ns(compress_gpu_ns_per_element * task.work);
    if (task.kind == "powersgd") return from_ns(powersgd_ns_per_byte() * task.work);
    unknown_kind(task, model);
  }
};

// Deterministic per-parameter readiness inside a backward: the share of the
// backward's time after which parameter p's gradient exists. Without a
// measured table (a profile's `layers:`), from FLOPs: backward walks the
// parameters in reverse registration order and spends on each about what
// its operation cost forward (2 x, like the whole), so
// share[p] = FLOPs of parameters p..P-1 / all FLOPs.
std::vector<double> backward_shares_from_flops(const ComputeModelConfig& c) {
  const auto flops = model::parameter_forward_flops(c.model, {c.channels, c.height, c.width, c.classes});
  double total = 0;
  for (const auto& f : flops) total += f.forward_flops;
  std::vector<double> share(flops.size(), 1.0);
  double after = 0;
  for (std::size_t j = flops.size(); j-- > 0;) {
    after += flops[j].forward_flops;
    share[j] = total > 0 ? after / total : 1.0;
  }
  return share;
}

class RateModel final : public ComputeTimeModel {
 public:
  RateModel(const char* name, KernelRates rates, std::vector<double> backward_shares, nlohmann::json description)
      : name_(name), rates_(rates), backward_shares_(std::move(backward_shares)), description_(std::move(description)) {}
  Nanos cost(const ComputeCost& task, Nanos) const override { return rates_.cost(task, name_); }
  // Only backward reports marks; any other mark counts as the task's end.
  double progress_share(const ComputeCost& task, int mark, double) const override {
    if (task.kind != "backward" || mark < 0 || static_cast<std::size_t>(mark) >= backward_shares_.size()) return 1.0;
    return backward_shares_[static_cast<std::size_t>(mark)];
  }
  bool deterministic() const override { return true; }
  nlohmann::json describe() const override { return description_; }

 private:
  const char* name_;
  KernelRates rates_;
  std::vector<double> backward_shares_;  // per parameter
  nlohmann::json description_;
};

// A profile's measured per-parameter readiness (`layers:`, written by
// `stellatrain bench profile`): one entry per parameter in registration
// order, named as the model names it, each `backward_ready_ms` after the
// backward started (at the profile's batch).
std::vector<double> backward_shares_from_profile(const util::YamlField& layers, const ComputeModelConfig& c,
                                                 double backward_ms) {
  const auto expected = model::parameter_forward_flops(c.model, {c.channels, c.height, c.width, c.classes});
  layers.require_sequence();
  if (layers.size() != expected.size())
    layers.fail(fmt::format("{} entries, but model '{}' has {} parameters", layers.size(), c.model, expected.size()));
  std::vector<double> share;
  for (std::size_t p = 0; p < expected.size(); ++p) {
    const auto entry = layers.at(p);
    entry.allow_only({"name", "backward_ready_ms"});
    if (entry.at("name").text() != expected[p].name)
      entry.at("name").fail(fmt::format("expected parameter '{}' here (registration order)", expected[p].name));
    const double ready = entry.at("backward_ready_ms").number_in(0, 1e12);
    share.push_back(backward_ms > 0 ? std::min(1.0, ready / backward_ms) : 1.0);
  }
  return share;
}

// --- profile -------------------------------------------------------------

std::unique_ptr<ComputeTimeModel> make_profile_model(const ComputeModelConfig& c) {
  if (c.profile_path.empty()) throw std::invalid_argument("compute.profile: the profile model needs a profile file");
  // A profile is measured, never written by hand (a GPU scenario's stays
  // absent until it has been measured on that GPU): say how to make one.
  if (!std::filesystem::exists(c.profile_path))
    throw std::runtime_error(fmt::format(
        "{}: no such compute profile; measure one on the device it describes with `stellatrain bench profile "
        "--models {} [--compute-device cuda] --device NAME --out {}` (docs/sim.md; GPUs: scripts/gpu/check.sh)",
        c.profile_path, c.model, c.profile_path));
  const auto root = util::YamlField::load_file(c.profile_path);
  root.allow_only({"device", "measured_with", "compute_device", "cpu", "accelerator", "transfer", "models"});
  const auto cpu = root.at("cpu");
  cpu.allow_only({"gather_ns_per_element", "compress_ns_per_element", "optimize_ns_per_index"});
  const auto accelerator = root.at("accelerator");
  accelerator.allow_only({"optimize_dense_ns_per_element", "compress_gpu_ns_per_element"});
  const auto models = root.at("models");
  models.require_map();
  if (!models.has(c.model))
    models.fail(fmt::format("no entry for model '{}' (add one measured with `stellatrain bench profile --models {}`)",
                            c.model, c.model));
  const auto entry = models.at(c.model);
  entry.allow_only({"batch", "forward_ms", "backward_ms", "layers"});
  constexpr double kMax = 1e12;
  const double batch = entry.at("batch").number_in(1, kMax);
  KernelRates rates;
  // Linear in the batch size: the profile's times scale to the run's batch.
  rates.forward_ms_per_sample = entry.at("forward_ms").number_in(0, kMax) / batch;
  rates.backward_ms_per_sample = entry.at("backward_ms").number_in(0, kMax) / batch;
  rates.gather_ns_per_element = cpu.at("gather_ns_per_element").number_in(0, kMax);
  rates.compress_ns_per_element = cpu.at("compress_ns_per_element").number_in(0, kMax);
  rates.optimize_ns_per_index = cpu.at("optimize_ns_per_index").number_in(0, kMax);
  rates.optimize_dense_ns_per_element = accelerator.at("optimize_dense_ns_per_element").number_in(0, kMax);
  rates.compress_gpu_ns_per_element = accelerator.at("compress_gpu_ns_per_element").number_in(0, kMax);
  // A GPU profile's device-to-host rate: a layer's gather first brings each
  // worker's gradient (4 bytes per element) into host memory.
  double d2h_gbps = 0;
  if (root.has("transfer")) {
    const auto transfer = root.at("transfer");
    transfer.allow_only({"d2h_gbps", "h2d_gbps"});
    d2h_gbps = transfer.at("d2h_gbps").number_in(1e-3, kMax);
    transfer.at("h2d_gbps").number_in(1e-3, kMax);
    rates.gather_ns_per_element += 4.0 / d2h_gbps;  // GB/s = bytes per ns
  }
  const bool measured_layers = entry.has("layers");
  auto shares = measured_layers
                    ? backward_shares_from_profile(entry.at("layers"), c, entry.at("backward_ms").number_in(0, kMax))
                    : backward_shares_from_flops(c);
  nlohmann::json description = {{"kind", "profile"},
                                {"per_layer_backward", measured_layers ? "profile" : "flops"},
                                {"profile", c.profile_path},
                                {"device", root.text_or("device", "")},
                                {"model", c.model},
                                {"profile_batch", batch},
                                {"d2h_gbps", d2h_gbps},
                                {"forward_ms_per_sample", rates.forward_ms_per_sample},
                                {"backward_ms_per_sample", rates.backward_ms_per_sample}};
  return std::make_unique<RateModel>("profile", rates, std::move(shares), description);
}

// --- analytic --------------------------------------------------------------

std::unique_ptr<ComputeTimeModel> make_analytic_model(const ComputeModelConfig& c) {
  for (auto [name, value] : {std::pair<const char*, double>{"device_tflops", c.device_tflops},
                             {"device_gbps", c.device_gbps},
                             {"cpu_gbps", c.cpu_gbps}})
    if (!(value > 0) || !std::isfinite(value))
      throw std::invalid_argument(fmt::format("compute.{}: must be a positive number, got {}", name, value));
  const double flops = model::forward_flops_per_sample(c.model, {c.channels, c.height, c.width, c.classes});
  KernelRates rates;
  rates.forward_ms_per_sample = flops / (c.device_tflops * 1e12) * 1e3;
  rates.backward_ms_per_sample = 2 * rates.forward_ms_per_sample;
  // Bytes touched per element / rate (GB/s = bytes per ns).
  rates.gather_ns_per_element = 8 / c.cpu_gbps;             // read one gradient, update the sum
  rates.compress_ns_per_element = 4 / c.cpu_gbps;           // one streaming pass
  rates.optimize_ns_per_index = 24 / c.cpu_gbps;            // index, value, parameter, momentum (read+write)
  rates.optimize_dense_ns_per_element = 16 / c.device_gbps;  // parameter and momentum, read and write
  rates.compress_gpu_ns_per_element = 12 / c.device_gbps;    // |g|, selection pass, residual update
  nlohmann::json description = {{"kind", "analytic"},
                                {"model", c.model},
                                {"forward_flops_per_sample", flops},
                                {"device_tflops", c.device_tflops},
                                {"device_gbps", c.device_gbps},
                                {"cpu_gbps", c.cpu_gbps}};
  return std::make_unique<RateModel>("analytic", rates, backward_shares_from_flops(c), description);
}

// Heterogeneous clusters: each task is priced by its node's own model
// (tasks tied to no node by node 0's).
class PerNodeModel final : public ComputeTimeModel {
 public:
  explicit PerNodeModel(std::vector<std::unique_ptr<ComputeTimeModel>> models) : models_(std::move(models)) {}
  runtime::Nanos cost(const runtime::ComputeCost& task, runtime::Nanos measured) const override {
    const std::size_t node = task.node >= 0 ? static_cast<std::size_t>(task.node) : 0;
    if (node >= models_.size())
      throw std::invalid_argument(fmt::format("compute model: node {} has no model ({} nodes)", task.node, models_.size()));
    return models_[node]->cost(task, measured);
  }
  double progress_share(const runtime::ComputeCost& task, int mark, double measured_share) const override {
    const std::size_t node = task.node >= 0 ? static_cast<std::size_t>(task.node) : 0;
    return models_.at(std::min(node, models_.size() - 1))->progress_share(task, mark, measured_share);
  }
  bool deterministic() const override {
    return std::all_of(models_.begin(), models_.end(), [](const auto& m) { return m->deterministic(); });
  }
  nlohmann::json describe() const override {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& m : models_) nodes.push_back(m->describe());
    return {{"kind", "per-node"}, {"nodes", nodes}};
  }

 private:
  std::vector<std::unique_ptr<ComputeTimeModel>> models_;
};

std::unique_ptr<ComputeTimeModel> make_uniform_model(const ComputeModelConfig& config) {
  if (config.kind == "measured") return std::make_unique<MeasuredModel>(config.scale);
  if (config.kind == "profile") return make_profile_model(config);
  if (config.kind == "analytic") return make_analytic_model(config);
  throw std::invalid_argument(
      fmt::format("compute.model: unknown compute-time model '{}' (expected measured, profile or analytic)", config.kind));
}

}  // namespace

std::unique_ptr<ComputeTimeModel> make_compute_model(const ComputeModelConfig& config) {
  const std::size_t nodes = std::max(config.node_profiles.size(), config.node_tflops.size());
  if (nodes > 0) {
    std::vector<std::unique_ptr<ComputeTimeModel>> models;
    for (std::size_t n = 0; n < nodes; ++n) {
      ComputeModelConfig own = config;
      own.node_profiles.clear();
      own.node_tflops.clear();
      if (n < config.node_profiles.size() && !config.node_profiles[n].empty()) own.profile_path = config.node_profiles[n];
      if (n < config.node_tflops.size() && config.node_tflops[n] > 0) own.device_tflops = config.node_tflops[n];
      models.push_back(make_uniform_model(own));
    }
    return std::make_unique<PerNodeModel>(std::move(models));
  }
  return make_uniform_model(config);
}

}  // namespace st::sim
