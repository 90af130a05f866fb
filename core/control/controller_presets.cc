#include "core/control/controller_presets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <stdexcept>

namespace st::control {
namespace {

void bytes_bound(ControllerOptions& o) {
  auto& e = o.estimator;
  o.window_includes_load = true;
  e.decrease_once = true;
  e.resume_at_delivered = true;
  e.probe_ceiling = 1.15;
  o.probe_at_start = true;
  e.pair_by_iteration = true;
  o.interval_s = 0.5;
  o.early_density_switch = true;
  e.fresh_overruns = true;
  e.after_previous_iteration = true;
  o.safety = 1.0;
  e.wait_decrease = 0.5;
  e.drain_at_delivered = true;
}

void keep_busy(ControllerOptions& o) {
  bytes_bound(o);
  o.link_utilization = 0.85;
  o.estimator.probe_growth = 2;
  o.probe_every_iteration = true;
  o.early_ticks = 4;
}

}  // namespace

const std::vector<std::string>& controller_preset_names() {
  static const std::vector<std::string> names = {"bytes-bound", "keep-busy"};
  return names;
}

void apply_controller_preset(ControllerOptions& options, const std::string& name) {
  if (name == "bytes-bound") {
    bytes_bound(options);
  } else if (name == "keep-busy") {
    keep_busy(options);
  } else {
    throw std::invalid_argument(
        fmt::format("controller preset '{}' is not one of {}", name, fmt::join(controller_preset_names(), ", ")));
  }
}

}  // namespace st::control
