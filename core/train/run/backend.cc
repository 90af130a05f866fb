#include "core/train/run/backend.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/train/config.h"
#include "core/train/system_registry.h"

namespace st::train {

void Backend::check(const TrainConfig& config) const {
  validate(config);
  require_real_network(system_named(config.system), name(), simulated());
  // A timing run skips the math and only a simulated backend's compute model
  // prices it; real and emu nodes run every stage's real math.
  if (config.math == "timing" && !simulated())
    throw std::invalid_argument(fmt::format(
        "math: timing runs need the sim backend (its compute model prices the skipped math); the {} backend runs "
        "the real math",
        name()));
}

}  // namespace st::train
