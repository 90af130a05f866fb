#include "sim/compute_model.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/compress/compressor_names.h"
#include "core/model/flops.h"
#include "core/runtime/cpu_cores.h"
#include "core/util/yaml_fields.h"

namespace st::sim {
namespace {

using runtime::ComputeCost;
using runtime::Nanos;

Nanos from_ms(double ms) { return Nanos(static_cast<int64_t>(std::llround(ms * 1e6))); }
Nanos from_ns(double ns) { return Nanos(static_cast<int64_t>(std::llround(ns))); }

// Evaluation is a measurement of the run, not part of it: it costs no
// virtual time under any model (on real runs it shares the CPU).
bool is_free(const ComputeCost& task) { return task.kind == runtime::TaskKind::kEvaluate; }

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
  // The machine measured is this one.
  int cpu_cores(int) const override { return runtime::available_cpu_cores(); }
  std::string cpu_cores_origin(int) const override { return "this machine"; }

 private:
  double scale_;
};

// A compressor's cost per scanned element as a function of the density it
// keeps: it scans every element and writes the kept ones, so the cost grows
// with the density. Measured points, linear between them and flat beyond
// the ends; a single point is a cost that ignores the density.
struct CompressCurve {
  std::vector<std::pair<double, double>> points;  // (density, ns per element), densities increasing

  double at(double density) const {
    if (points.empty()) return 0;
    if (density <= points.front().first) return points.front().second;
    if (density >= points.back().first) return points.back().second;
    const auto upper = std::lower_bound(points.begin(), points.end(), density,
                                        [](const auto& p, double d) { return p.first < d; });
    const auto lower = upper - 1;
    const double share = (density - lower->first) / (upper->first - lower->first);
    return lower->second + share * (upper->second - lower->second);
  }
  nlohmann::json describe() const {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [d, ns] : points) out[fmt::format("{}", d)] = ns;
    return out;
  }
};

// Per-kind rates shared by the profile and analytic models.
struct KernelRates {
  double forward_ms_per_sample = 0, backward_ms_per_sample = 0;
  double gather_ns_per_element = 0, optimize_ns_per_index = 0;
  CompressCurve compress;
  double copy_ns_per_element = 0;  // out of the master, plainly
  double view_ns_per_element = 0;  // out of the master through its view
  double load_ns_per_element = 0;  // into one replica (host copy + host-to-device on a GPU)
  double optimize_dense_ns_per_element = 0, compress_gpu_ns_per_element = 0;
  // ddp-powersgd's matrix products and error feedback (work: bytes moved
  // through device memory; memory-bound, see ddp_hook_systems.cc): at the
  // dense step's bandwidth, which moves 16 bytes per element.
  double powersgd_ns_per_byte() const { return optimize_dense_ns_per_element / 16; }

  // The price table, keyed by the task kind (each rate in the unit its
  // kind's `work` counts, runtime::TaskKind).
  Nanos cost(const ComputeCost& task) const {
    switch (task.kind) {
      case runtime::TaskKind::kForward: return from_ms(forward_ms_per_sample * task.work);
      case runtime::TaskKind::kBackward: return from_ms(backward_ms_per_sample * task.work);
      case runtime::TaskKind::kGather: return from_ns(gather_ns_per_element * task.work);
      case runtime::TaskKind::kCopy: return from_ns(copy_ns_per_element * task.work);
      case runtime::TaskKind::kView: return from_ns(view_ns_per_element * task.work);
      case runtime::TaskKind::kLoad: return from_ns(load_ns_per_element * task.work);
      case runtime::TaskKind::kCompress: return from_ns(compress.at(task.density) * task.work);
      case runtime::TaskKind::kCompressGpu: return from_ns(compress_gpu_ns_per_element * task.work);
      case runtime::TaskKind::kOptimize: return from_ns(optimize_ns_per_index * task.work);
      case runtime::TaskKind::kOptimizeDense: return from_ns(optimize_dense_ns_per_element * task.work);
      case runtime::TaskKind::kPowerSgd: return from_ns(powersgd_ns_per_byte() * task.work);
      case runtime::TaskKind::kEvaluate: return Nanos::zero();
    }
    throw std::logic_error("compute-time model: a task kind without a price");
  }

  nlohmann::json describe_cpu() const {
    return {{"gather_ns_per_element", gather_ns_per_element},
            {"copy_ns_per_element", copy_ns_per_element},
            {"view_ns_per_element", view_ns_per_element},
            {"load_ns_per_element", load_ns_per_element},
            {"compress_ns_per_element_at_density", compress.describe()},
            {"optimize_ns_per_index", optimize_ns_per_index}};
  }
};

model::ModelSpec spec_of(const ComputeModelConfig& c) {
  model::ModelSpec spec;
  spec.name = c.model;
  spec.torchscript = c.model_file;
  spec.forward_flops = c.model_flops;
  return spec;
}

// Deterministic per-parameter readiness inside a backward: the share of the
// backward's time after which parameter p's gradient exists. Without a
// measured table (a profile's `layers:`), from FLOPs: backward walks the
// parameters in reverse registration order and spends on each about what
// its operation cost forward (2 x, like the whole), so
// share[p] = FLOPs of parameters p..P-1 / all FLOPs.
std::vector<double> backward_shares_from_flops(const ComputeModelConfig& c) {
  const auto flops = model::parameter_forward_flops(spec_of(c), {c.channels, c.height, c.width, c.classes});
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
  RateModel(KernelRates rates, std::vector<double> backward_shares, nlohmann::json description, int cpu_cores = 0)
      : rates_(std::move(rates)),
        backward_shares_(std::move(backward_shares)),
        description_(std::move(description)),
        cpu_cores_(cpu_cores) {
    description_["cpu"] = rates_.describe_cpu();
    if (cpu_cores_ > 0) description_["cpu_cores"] = cpu_cores_;
  }
  Nanos cost(const ComputeCost& task, Nanos) const override { return rates_.cost(task); }
  // Only backward reports marks; any other mark counts as the task's end.
  double progress_share(const ComputeCost& task, int mark, double) const override {
    if (task.kind != runtime::TaskKind::kBackward || mark < 0 || static_cast<std::size_t>(mark) >= backward_shares_.size()) return 1.0;
    return backward_shares_[static_cast<std::size_t>(mark)];
  }
  bool deterministic() const override { return true; }
  nlohmann::json describe() const override { return description_; }
  int cpu_cores(int) const override { return cpu_cores_; }

 private:
  KernelRates rates_;
  std::vector<double> backward_shares_;  // per parameter
  nlohmann::json description_;
  int cpu_cores_;
};

// A profile's measured per-parameter readiness (`layers:`, written by
// `stellatrain bench profile`): one entry per parameter in registration
// order, named as the model names it, each `backward_ready_ms` after the
// backward started (at the profile's batch).
std::vector<double> backward_shares_from_profile(const util::YamlField& layers, const ComputeModelConfig& c,
                                                 double backward_ms) {
  const auto expected = model::parameter_forward_flops(spec_of(c), {c.channels, c.height, c.width, c.classes});
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

constexpr double kMaxRate = 1e12;

// `{0.01: ns, 0.05: ns, ...}`: one compressor's cost at each density.
CompressCurve read_density_table(const util::YamlField& table) {
  CompressCurve out;
  table.require_map();
  for (const auto& key : table.keys()) {
    double density = 0;
    try {
      std::size_t used = 0;
      density = std::stod(key, &used);
      if (used != key.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      table.fail(fmt::format("'{}' is not a density (a number in (0, 1])", key));
    }
    if (!(density > 0 && density <= 1)) table.fail(fmt::format("density {} is outside (0, 1]", key));
    out.points.emplace_back(density, table.at(key).number_in(0, kMaxRate));
  }
  if (out.points.empty()) table.fail("no densities");
  std::sort(out.points.begin(), out.points.end());
  for (std::size_t i = 1; i < out.points.size(); ++i)
    if (out.points[i].first == out.points[i - 1].first)
      table.fail(fmt::format("density {} is given twice", out.points[i].first));
  return out;
}

// thresholdv16's: `compress_ns_per_element_at_density` (what `stellatrain
// bench profile` writes), or one `compress_ns_per_element` (profiles
// measured at 5% density only).
CompressCurve read_compress_curve(const util::YamlField& cpu) {
  const bool curve = cpu.has("compress_ns_per_element_at_density");
  if (curve == cpu.has("compress_ns_per_element"))
    cpu.fail("give exactly one of compress_ns_per_element_at_density and compress_ns_per_element");
  if (curve) return read_density_table(cpu.at("compress_ns_per_element_at_density"));
  CompressCurve out;
  out.points.emplace_back(0.05, cpu.at("compress_ns_per_element").number_in(0, kMaxRate));
  return out;
}

constexpr const char* kCurvesByCompressor = "compress_ns_per_element_at_density_by_compressor";

// The run's compressor priced by its own curve where the profile measured
// one (`compress_ns_per_element_at_density_by_compressor: {topk: {...}}`),
// else by thresholdv16's: exact top-k's selection costs some 3x the
// blocks' on a CPU (docs/benchmarks.md), so the fallback is said in the
// manifest (`compress_curve`) and the log, never silent.
void price_run_compressor(const util::YamlField& cpu, const std::string& compressor, KernelRates& rates,
                          nlohmann::json& description) {
  std::map<std::string, CompressCurve> curves;  // every one checked, whichever the run uses
  if (cpu.has(kCurvesByCompressor)) {
    const auto table = cpu.at(kCurvesByCompressor);
    table.require_map();
    const auto own_curves = compress::compressors_with_own_curves();
    for (const auto& name : table.keys()) {
      if (std::find(own_curves.begin(), own_curves.end(), name) == own_curves.end())
        table.fail(fmt::format("'{}' is not a compressor with a curve of its own here ({}; "
                               "thresholdv16's is compress_ns_per_element_at_density)",
                               name, compress::joined_names(own_curves)));
      curves[name] = read_density_table(table.at(name));
    }
  }
  if (compressor.empty()) return;
  if (const auto own = curves.find(compressor); own != curves.end()) {
    rates.compress = own->second;
    description["compress_curve"] = compressor;
    return;
  }
  if (compressor == "thresholdv16") {
    description["compress_curve"] = compressor;
    return;
  }
  description["compress_curve"] = fmt::format("thresholdv16 (the profile has no curve of {}'s)", compressor);
  static std::mutex mutex;
  static std::set<std::string> warned;
  const std::lock_guard<std::mutex> lock(mutex);
  if (warned.insert(compressor).second)
    spdlog::warn("compute profile: no compress curve of {}'s ({}); its selection is priced as thresholdv16's. "
                 "`stellatrain bench profile --update FILE --compressors` measures one (docs/sim-compute.md)",
                 compressor, kCurvesByCompressor);
}

// The CPU kernels. Profiles from before copy and view were measured price
// them from the gather's streaming rate by the bytes each moves (gather 12
// per element: read a gradient, read and write the sum; copy 8; the view
// 16: parameter, momentum and last step read, the result written), and say
// so in the manifest (`derived`).
void read_cpu_rates(const util::YamlField& cpu, KernelRates& rates, nlohmann::json& derived) {
  cpu.allow_only({"gather_ns_per_element", "copy_ns_per_element", "view_ns_per_element", "compress_ns_per_element",
                  "compress_ns_per_element_at_density", kCurvesByCompressor, "optimize_ns_per_index"});
  rates.gather_ns_per_element = cpu.at("gather_ns_per_element").number_in(0, kMaxRate);
  rates.compress = read_compress_curve(cpu);
  rates.optimize_ns_per_index = cpu.at("optimize_ns_per_index").number_in(0, kMaxRate);
  if (cpu.has("copy_ns_per_element")) {
    rates.copy_ns_per_element = cpu.at("copy_ns_per_element").number_in(0, kMaxRate);
  } else {
    rates.copy_ns_per_element = rates.gather_ns_per_element * 8 / 12;
    derived["copy_ns_per_element"] = "gather_ns_per_element x 8/12 (bytes moved)";
  }
  if (cpu.has("view_ns_per_element")) {
    rates.view_ns_per_element = cpu.at("view_ns_per_element").number_in(0, kMaxRate);
  } else {
    rates.view_ns_per_element = rates.gather_ns_per_element * 16 / 12;
    derived["view_ns_per_element"] = "gather_ns_per_element x 16/12 (bytes moved)";
  }
  // A replica's load is a host copy (into the replica on the CPU, or into
  // its page-locked staging buffer on a GPU); the transfer comes on top.
  rates.load_ns_per_element = rates.copy_ns_per_element;
}

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
  root.allow_only({"device", "measured_with", "kernels_measured_with", "compressors_measured_with", "compute_device",
                   "cpu_cores", "cpu", "accelerator", "transfer", "models"});
  const auto accelerator = root.at("accelerator");
  accelerator.allow_only({"optimize_dense_ns_per_element", "compress_gpu_ns_per_element"});
  const auto models = root.at("models");
  models.require_map();
  if (!models.has(c.model))
    models.fail(fmt::format("no entry for model '{}' (add one measured with `stellatrain bench profile --models {}`)",
                            c.model, c.model));
  const auto entry = models.at(c.model);
  entry.allow_only({"batch", "forward_ms", "backward_ms", "layers"});
  const double batch = entry.at("batch").number_in(1, kMaxRate);
  KernelRates rates;
  // Linear in the batch size: the profile's times scale to the run's batch.
  rates.forward_ms_per_sample = entry.at("forward_ms").number_in(0, kMaxRate) / batch;
  rates.backward_ms_per_sample = entry.at("backward_ms").number_in(0, kMaxRate) / batch;
  rates.optimize_dense_ns_per_element = accelerator.at("optimize_dense_ns_per_element").number_in(0, kMaxRate);
  rates.compress_gpu_ns_per_element = accelerator.at("compress_gpu_ns_per_element").number_in(0, kMaxRate);
  nlohmann::json derived = nlohmann::json::object();
  read_cpu_rates(root.at("cpu"), rates, derived);
  // A GPU profile's transfer rates: a layer's gather first brings each
  // worker's gradient (4 bytes per element) into host memory, and a load
  // copies every parameter into the replica's device memory.
  double d2h_gbps = 0, h2d_gbps = 0;
  if (root.has("transfer")) {
    const auto transfer = root.at("transfer");
    transfer.allow_only({"d2h_gbps", "h2d_gbps"});
    d2h_gbps = transfer.at("d2h_gbps").number_in(1e-3, kMaxRate);
    h2d_gbps = transfer.at("h2d_gbps").number_in(1e-3, kMaxRate);
    rates.gather_ns_per_element += 4.0 / d2h_gbps;  // GB/s = bytes per ns
    rates.load_ns_per_element += 4.0 / h2d_gbps;
  }
  const int cpu_cores = root.has("cpu_cores") ? static_cast<int>(root.at("cpu_cores").integer_in(1, 4096)) : 0;
  const bool measured_layers = entry.has("layers");
  auto shares = measured_layers
                    ? backward_shares_from_profile(entry.at("layers"), c, entry.at("backward_ms").number_in(0, kMaxRate))
                    : backward_shares_from_flops(c);
  nlohmann::json description = {{"kind", "profile"},
                                {"per_layer_backward", measured_layers ? "profile" : "flops"},
                                {"profile", c.profile_path},
                                {"device", root.text_or("device", "")},
                                {"model", c.model},
                                {"profile_batch", batch},
                                {"d2h_gbps", d2h_gbps},
                                {"h2d_gbps", h2d_gbps},
                                {"forward_ms_per_sample", rates.forward_ms_per_sample},
                                {"backward_ms_per_sample", rates.backward_ms_per_sample}};
  if (!derived.empty()) description["cpu_derived"] = derived;
  price_run_compressor(root.at("cpu"), c.compressor, rates, description);
  return std::make_unique<RateModel>(rates, std::move(shares), description, cpu_cores);
}

// --- analytic --------------------------------------------------------------

std::unique_ptr<ComputeTimeModel> make_analytic_model(const ComputeModelConfig& c) {
  for (auto [name, value] : {std::pair<const char*, double>{"device_tflops", c.device_tflops},
                             {"device_gbps", c.device_gbps},
                             {"cpu_gbps", c.cpu_gbps},
                             {"h2d_gbps", c.h2d_gbps}})
    if (!(value > 0) || !std::isfinite(value))
      throw std::invalid_argument(fmt::format("compute.{}: must be a positive number, got {}", name, value));
  const double flops = model::forward_flops_per_sample(spec_of(c), {c.channels, c.height, c.width, c.classes});
  KernelRates rates;
  rates.forward_ms_per_sample = flops / (c.device_tflops * 1e12) * 1e3;
  rates.backward_ms_per_sample = 2 * rates.forward_ms_per_sample;
  // Bytes touched per element / rate (GB/s = bytes per ns).
  rates.gather_ns_per_element = 8 / c.cpu_gbps;  // read one gradient, update the sum
  // One streaming pass over the gradient, plus a value and an index written
  // per kept element.
  rates.compress.points = {{0.0, 4 / c.cpu_gbps}, {1.0, 12 / c.cpu_gbps}};
  rates.copy_ns_per_element = 8 / c.cpu_gbps;   // read, write
  rates.view_ns_per_element = 16 / c.cpu_gbps;  // parameter, momentum, last step read; the result written
  // The replicas live on the modelled GPUs: a host copy into the page-locked
  // staging buffer, then the transfer.
  rates.load_ns_per_element = 8 / c.cpu_gbps + 4 / c.h2d_gbps;
  rates.optimize_ns_per_index = 24 / c.cpu_gbps;            // index, value, parameter, momentum (read+write)
  rates.optimize_dense_ns_per_element = 16 / c.device_gbps;  // parameter and momentum, read and write
  rates.compress_gpu_ns_per_element = 12 / c.device_gbps;    // |g|, selection pass, residual update
  nlohmann::json description = {{"kind", "analytic"},
                                {"model", c.model},
                                {"forward_flops_per_sample", flops},
                                {"device_tflops", c.device_tflops},
                                {"device_gbps", c.device_gbps},
                                {"cpu_gbps", c.cpu_gbps},
                                {"h2d_gbps", c.h2d_gbps}};
  return std::make_unique<RateModel>(rates, backward_shares_from_flops(c), description);
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
  int cpu_cores(int node) const override {
    const std::size_t n = node >= 0 ? static_cast<std::size_t>(node) : 0;
    return n < models_.size() ? models_[n]->cpu_cores(node) : 0;
  }
  std::string cpu_cores_origin(int node) const override {
    const std::size_t n = node >= 0 ? static_cast<std::size_t>(node) : 0;
    return n < models_.size() ? models_[n]->cpu_cores_origin(node) : "profile";
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
