#include "core/train/config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <stdexcept>

#include "core/device/compute_device.h"

namespace st::train {
namespace {

void require(bool ok, const char* field, const std::string& why) {
  if (!ok) throw std::invalid_argument(fmt::format("train config: {} {}", field, why));
}

}  // namespace

const std::vector<std::string>& system_names() {
  static const std::vector<std::string> names = {"stellatrain", "ddp",          "topk-sync",         "ddp-gloo",
                                                 "local-sgd",   "cloudless-ma", "cloudless-asgd-ga", "ddp-fp16",
                                                 "ddp-powersgd"};
  return names;
}

bool is_system_name(const std::string& name) {
  const auto& names = system_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string system_names_text() { return fmt::format("{}", fmt::join(system_names(), ", ")); }

void validate(const TrainConfig& c) {
  require(is_system_name(c.system), "system", fmt::format("'{}' is not one of {}", c.system, system_names_text()));
  require(c.dataset == "fashion-mnist" || c.dataset == "cifar10" || c.dataset == "synthetic", "dataset",
          fmt::format("'{}' is not one of fashion-mnist, cifar10, synthetic", c.dataset));
  require(c.math == "full" || c.math == "timing", "math", fmt::format("'{}' is not one of full, timing", c.math));
  require(c.math == "full" || c.system != "ddp-gloo", "math",
          "timing runs need the simulator's compute model; ddp-gloo runs only on real networks");
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
  require(c.batch_per_worker >= 1, "batch_per_worker", "must be at least 1");
  require(c.iterations >= 1, "iterations", "must be at least 1");
  require(c.time_budget_s >= 0, "time_budget_s", "must be >= 0 (0: no limit)");
  require(c.lr > 0, "lr", "must be positive");
  require(c.momentum >= 0 && c.momentum < 1, "momentum", "must be in [0, 1)");
  require(c.weight_decay >= 0, "weight_decay", "must be >= 0");
  require(c.density > 0 && c.density <= 1, "density", "must be in (0, 1]");
  require(c.staleness == 0 || c.staleness == 1, "staleness", "must be 0 or 1");
  require(c.warmup_iterations >= 0, "warmup_iterations", "must be >= 0");
  require(c.lazy_momentum == "decay" || c.lazy_momentum == "exact", "lazy_momentum",
          fmt::format("'{}' is not one of decay, exact", c.lazy_momentum));
  require(c.staleness_compensation == "none" || c.staleness_compensation == "predict" ||
              c.staleness_compensation == "lookahead" || c.staleness_compensation == "dc",
          "staleness_compensation",
          fmt::format("'{}' is not one of none, predict, lookahead, dc", c.staleness_compensation));
  require(c.dc_lambda >= 0, "dc_lambda", "must be >= 0");
  require(c.momentum_at == "master" || c.momentum_at == "node", "momentum_at",
          fmt::format("'{}' is not one of master, node", c.momentum_at));
  require(!c.controller || c.system == "stellatrain", "controller", "only stellatrain has a controller");
  if (c.controller) {
    try {
      control::validate(c.control);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("train config: {}", e.what()));
    }
  }
  require(c.averaging_period >= 1, "averaging_period", "must be at least 1");
  require(c.averaging_period_s >= 0, "averaging_period_s", "must be >= 0 (0: by iterations)");
  require(c.local_sgd_start_iteration >= 0, "local_sgd_start_iteration", "must be >= 0");
  require(c.accumulation_steps >= 1, "accumulation_steps", "must be at least 1");
  require(c.max_staleness >= 0, "max_staleness", "must be >= 0");
  // ddp-powersgd and ddp-gloo's hook
  require(c.comm_hook == "none" || c.comm_hook == "fp16", "comm_hook",
          fmt::format("'{}' is not one of none, fp16", c.comm_hook));
  require(c.comm_hook == "none" || c.system == "ddp-gloo", "comm_hook",
          "only ddp-gloo takes a communication hook (ddp-fp16 is the engine's own)");
  require(c.comm_hook == "none" || c.gpus_per_node == 1, "comm_hook",
          "c10d's hooks run on the Reducer, which ddp-gloo uses with one local worker (gpus_per_node 1)");
  require(c.powersgd_rank >= 1 && c.powersgd_rank <= 1024, "powersgd_rank", "must be in 1..1024");
  require(c.powersgd_start_iteration >= 0, "powersgd_start_iteration", "must be >= 0 (0: compress from the start)");
  require(c.eval_interval >= 0, "eval_interval", "must be >= 0");
  require(c.transport == "inproc" || c.transport == "tcp", "transport",
          fmt::format("'{}' is not one of inproc, tcp", c.transport));
  require(c.transport != "tcp" || (c.rank >= 0 && c.rank < c.nodes), "rank",
          fmt::format("{} is outside [0, nodes = {})", c.rank, c.nodes));
  require(c.master_port > 0 && c.master_port < 65536, "master_port", "must be in 1..65535");
  require(c.compressor == "thresholdv16" || c.compressor == "thresholdv" || c.compressor == "topk" ||
              c.compressor == "randomk",
          "compressor", fmt::format("'{}' is not one of thresholdv16, thresholdv, topk, randomk", c.compressor));
}

double lr_scale_at(const TrainConfig& c, int iteration) {
  if (iteration >= c.warmup_iterations) return 1.0;
  return static_cast<double>(iteration + 1) / c.warmup_iterations;
}

}  // namespace st::train
