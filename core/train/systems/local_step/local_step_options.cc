#include "core/train/systems/local_step/local_step_options.h"

#include <fmt/format.h>

#include <stdexcept>

namespace st::train {
using detail::require;

namespace {

constexpr long long kMaxIterations = 10'000'000;
const char* const kPeriodHelp = "Iterations between model averages";

}  // namespace

std::vector<OptionField> LocalSgdOptions::make_fields() {
  using O = LocalSgdOptions;
  return Fields<O>()
      .integer("averaging_period", &O::averaging_period, 1, kMaxIterations, "--averaging-period", kPeriodHelp)
      .integer("start_iteration", &O::start_iteration, 0, kMaxIterations, "--local-sgd-start",
               "DDP iterations before local steps start");
}

void LocalSgdOptions::validate(const TrainConfig&) const {
  require(averaging_period >= 1, "averaging_period", "must be at least 1");
  require(start_iteration >= 0, "local_sgd_start_iteration", "must be >= 0");
}

std::vector<OptionField> CloudlessMaOptions::make_fields() {
  using O = CloudlessMaOptions;
  return Fields<O>()
      .integer("averaging_period", &O::averaging_period, 1, kMaxIterations, "--averaging-period", kPeriodHelp)
      .number("averaging_period_s", &O::averaging_period_s, 0, 1e9, "--averaging-period-s",
              "Seconds between model averages (0: by iterations)")
      .boolean("overlap", &O::overlap, "!--no-averaging-overlap", "Wait for each average instead of training on");
}

void CloudlessMaOptions::validate(const TrainConfig&) const {
  require(averaging_period >= 1, "averaging_period", "must be at least 1");
  require(averaging_period_s >= 0, "averaging_period_s", "must be >= 0 (0: by iterations)");
}

std::vector<OptionField> CloudlessAsgdOptions::make_fields() {
  using O = CloudlessAsgdOptions;
  return Fields<O>()
      .integer("accumulation_steps", &O::accumulation_steps, 1, kMaxIterations, "--accumulation-steps",
               "Iterations per sent accumulation")
      .integer("max_staleness", &O::max_staleness, 0, kMaxIterations, "--max-staleness",
               "Staleness bound in iterations");
}

void CloudlessAsgdOptions::validate(const TrainConfig&) const {
  require(accumulation_steps >= 1, "accumulation_steps", "must be at least 1");
  require(max_staleness >= 0, "max_staleness", "must be >= 0");
}

}  // namespace st::train
