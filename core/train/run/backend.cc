#include "core/train/run/backend.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/train/config.h"
#include "core/train/system_registry.h"

namespace st::train {

void Backend::check(const TrainConfig& config) const {
  validate(config);
  require_real_network(system_named(config.system), name(), simulated());
  // A timing run skips the math, and only a compute-time model prices it.
  if (config.math == "timing" && !prices_compute())
    throw std::invalid_argument(fmt::format(
        "math: timing runs need a backend that prices compute by a model (sim; emu with compute.model profile or "
        "analytic); the {} backend here measures the real math",
        name()));
}

}  // namespace st::train
