#include "core/train/run/backend.h"

#include "core/train/config.h"
#include "core/train/system_registry.h"

namespace st::train {

void Backend::check(const TrainConfig& config) const {
  validate(config);
  require_real_network(system_named(config.system), name(), simulated());
}

}  // namespace st::train
