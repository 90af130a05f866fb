#include "core/train/systems/sync/sync_options.h"

#include <fmt/format.h>

#include <stdexcept>

namespace st::train {

using detail::require;

std::vector<OptionField> TopkSyncOptions::make_fields() {
  return Fields<TopkSyncOptions>().number("density", &TopkSyncOptions::density, 1e-6, 1, "--density",
                                          "Fraction of gradient elements sent");
}

void TopkSyncOptions::validate(const TrainConfig&) const {
  require(density > 0 && density <= 1, "density", "must be in (0, 1]");
}

std::vector<OptionField> DdpPowerSgdOptions::make_fields() {
  using O = DdpPowerSgdOptions;
  return Fields<O>()
      .integer("powersgd_rank", &O::rank, 1, 1024, "--powersgd-rank", "Rank of the approximation")
      .integer("powersgd_start_iteration", &O::start_iteration, 0, 1000000000, "--powersgd-start-iteration",
               "Plain DDP before this iteration")
      .boolean("powersgd_error_feedback", &O::error_feedback, "!--no-powersgd-error-feedback", "No error feedback")
      .boolean("powersgd_warm_start", &O::warm_start, "!--no-powersgd-warm-start", "A fresh Q every iteration");
}

void DdpPowerSgdOptions::validate(const TrainConfig&) const {
  require(rank >= 1 && rank <= 1024, "powersgd_rank", "must be in 1..1024");
  require(start_iteration >= 0, "powersgd_start_iteration", "must be >= 0 (0: compress from the start)");
}

}  // namespace st::train
