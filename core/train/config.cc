#include "core/train/config.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/device/compute_device.h"
#include "core/train/system_registry.h"

namespace st::train {

using detail::require;

namespace detail {

void wrong_options(const char* wanted, const SystemOptions* options) {
  throw std::logic_error(fmt::format("system options: wanted {}, the run has {}", wanted,
                                     options ? typeid(*options).name() : "none"));
}

}  // namespace detail

TrainConfig::TrainConfig() { use_system(system); }

void TrainConfig::use_system(const std::string& name) {
  const auto& descriptor = system_named(name);
  system = descriptor.name;
  options = util::ClonePtr<SystemOptions>(descriptor.make_options());
}

void validate(const TrainConfig& c) {
  require(is_system_name(c.system), "system", fmt::format("'{}' is not one of {}", c.system, system_names_text()));
  const auto& descriptor = system_named(c.system);
  require(c.options && typeid(*c.options) == typeid(*descriptor.make_options()), "options",
          fmt::format("are not {}'s (set the system with use_system)", c.system));
  require(c.dataset == "fashion-mnist" || c.dataset == "cifar10" || c.dataset == "synthetic" || c.dataset == "npz",
          "dataset", fmt::format("'{}' is not one of fashion-mnist, cifar10, synthetic, npz", c.dataset));
  require(c.dataset != "npz" || !c.data_file.empty(), "data_file", "the npz dataset needs its file");
  require(c.dataset == "npz" || c.data_file.empty(), "data_file", "only the npz dataset reads a file");
  require(c.math == "full" || c.math == "timing", "math", fmt::format("'{}' is not one of full, timing", c.math));
  require(c.math == "full" || !descriptor.real_network_only, "math",
          fmt::format("timing runs price their compute through the engine's executor; {} trains in its own "
                      "process group, which nothing prices or paces",
                      c.system));
  require(c.stage_sample.fraction >= 0 && c.stage_sample.fraction <= 1, "stage_sample.fraction",
          fmt::format("{} is not in [0, 1] (0: full-size stages)", c.stage_sample.fraction));
  require(c.stage_sample.min_elements >= 16, "stage_sample.min_elements",
          fmt::format("{} is below one block of 16 elements", c.stage_sample.min_elements));
  require(!c.stage_sample.enabled() || c.math == "timing", "stage_sample",
          "samples only timing runs (math: timing); a run that measures accuracy keeps every stage whole");
  require(!c.stage_sample.enabled() || descriptor.samples_stages, "stage_sample",
          fmt::format("{} does not run its stages on samples (systems that do: {})", c.system,
                      join_names(systems_sampling_stages())));
  require(!c.timeline || !c.out_dir.empty(), "timeline", "needs a results folder (out_dir) to write timeline.json into");
  try {
    device::parse_compute_device(c.compute_device);
  } catch (const std::invalid_argument& e) {
    require(false, "compute_device", e.what());
  }
  require(c.synthetic_channels >= 1 && c.synthetic_height >= 1 && c.synthetic_width >= 1 && c.synthetic_classes >= 2,
          "synthetic shape", "channels, height and width must be at least 1 and classes at least 2");
  require(c.nodes >= 1, "nodes", "must be at least 1");
  require(c.gpus_per_node >= 1, "gpus_per_node", "must be at least 1");
  require(c.node_gpus.empty() || static_cast<int>(c.node_gpus.size()) == c.nodes, "node_gpus",
          fmt::format("has {} entries for {} nodes", c.node_gpus.size(), c.nodes));
  for (const int g : c.node_gpus) require(g >= 1, "node_gpus", "every node needs at least 1 GPU");
  require(c.label_skew >= 0 && c.label_skew <= 1, "label_skew", "must be in [0, 1]");
  require(c.batch_per_worker >= 1, "batch_per_worker", "must be at least 1");
  require(c.iterations >= 1, "iterations", "must be at least 1");
  require(c.iterations < kUnboundedIterations || c.time_budget_s > 0, "iterations",
          "unbounded needs a time budget (time_budget_s > 0)");
  require(c.time_budget_s >= 0, "time_budget_s", "must be >= 0 (0: no limit)");
  require(c.lr > 0, "lr", "must be positive");
  require(c.momentum >= 0 && c.momentum < 1, "momentum", "must be in [0, 1)");
  require(c.weight_decay >= 0, "weight_decay", "must be >= 0");
  require(c.warmup_iterations >= 0, "warmup_iterations", "must be >= 0");
  c.options->validate(c);
  require(c.evaluate_on == "test" || c.evaluate_on == "validation", "evaluate_on",
          fmt::format("'{}' is not one of test, validation", c.evaluate_on));
  require(c.eval_interval >= 0, "eval_interval", "must be >= 0");
  require(c.eval_interval_after >= 0, "eval_interval_after", "must be >= 0");
  require(c.eval_dense_until >= 0 && c.eval_dense_until <= 1, "eval_dense_until", "must be in [0, 1]");
  require(c.trace_offset_s >= 0 && std::isfinite(c.trace_offset_s), "trace_offset_s", "must be a finite number >= 0");
  require(c.transport == "inproc" || c.transport == "tcp", "transport",
          fmt::format("'{}' is not one of inproc, tcp", c.transport));
  require(c.transport != "tcp" || (c.rank >= 0 && c.rank < c.nodes), "rank",
          fmt::format("{} is outside [0, nodes = {})", c.rank, c.nodes));
  require(c.master_port > 0 && c.master_port < 65536, "master_port", "must be in 1..65535");
}

double lr_scale_at(const TrainConfig& c, int iteration) {
  if (iteration >= c.warmup_iterations) return 1.0;
  return static_cast<double>(iteration + 1) / c.warmup_iterations;
}

int TrainConfig::gpus_of(int node) const {
  return node_gpus.empty() ? gpus_per_node : node_gpus.at(static_cast<std::size_t>(node));
}

int TrainConfig::total_workers() const {
  if (node_gpus.empty()) return nodes * gpus_per_node;
  int total = 0;
  for (const int g : node_gpus) total += g;
  return total;
}

int TrainConfig::first_worker(int node) const {
  if (node_gpus.empty()) return node * gpus_per_node;
  int first = 0;
  for (int n = 0; n < node; ++n) first += node_gpus.at(static_cast<std::size_t>(n));
  return first;
}

}  // namespace st::train
