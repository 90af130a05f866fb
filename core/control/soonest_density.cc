#include "core/control/soonest_density.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace st::control {

double predicted_iteration_ms(const IterationPace& pace, double transfer_ms) {
  const double round_trip_paced =
      (pace.compute_ms + pace.exchange_latency_ms + transfer_ms) / (std::max(0, pace.staleness) + 1);
  return std::max({pace.compute_ms, transfer_ms, round_trip_paced});
}

double iterations_factor(double density, double sparsity_cost) { return 1 + sparsity_cost / std::sqrt(density); }

SoonestChoice soonest_density(const TrafficModel& model, double bandwidth_mbps, const IterationPace& pace,
                              double sparsity_cost, double lower, double upper) {
  if (!(lower > 0 && upper <= 1 && lower <= upper))
    throw std::invalid_argument(fmt::format("density bounds [{}, {}] must satisfy 0 < lower <= upper <= 1", lower, upper));
  if (!(bandwidth_mbps > 0)) throw std::invalid_argument(fmt::format("bandwidth {} Mbps must be positive", bandwidth_mbps));
  if (!(sparsity_cost >= 0)) throw std::invalid_argument(fmt::format("sparsity_cost {} must be >= 0", sparsity_cost));
  // A grid, not a bisection: P x N is not unimodal in general (the max()
  // has kinks and k's resolution makes bytes a step function), and 512
  // points steps of at most 2.5% over [0.001, 0.5] cost microseconds a tick.
  constexpr int kPoints = 512;
  const double ratio = upper / lower;
  SoonestChoice best;
  best.relative_time = std::numeric_limits<double>::infinity();
  for (int i = 0; i < kPoints; ++i) {
    const double d = i == kPoints - 1 ? upper : lower * std::pow(ratio, static_cast<double>(i) / (kPoints - 1));
    const double bytes = model.bytes_per_iteration(d);
    const double transfer_ms = bytes * 8 / (bandwidth_mbps * 1e6) * 1e3;
    const double iteration_ms = predicted_iteration_ms(pace, transfer_ms);
    const double relative_time = iteration_ms * iterations_factor(d, sparsity_cost);
    // <=: of equal times the larger density, which converges no worse.
    if (relative_time <= best.relative_time) {
      best.relative_time = relative_time;
      best.iteration_ms = iteration_ms;
      best.choice.density = d;
      best.choice.budget_ms = transfer_ms;
      best.choice.bytes = bytes;
    }
  }
  best.choice.at_lower_bound = best.choice.density == lower;
  best.choice.at_upper_bound = best.choice.density == upper;
  return best;
}

}  // namespace st::control
