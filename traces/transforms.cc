// Transforms of traces: outages, scaling, crop/loop, clamp, rounding.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "traces/generator_util.h"
#include "traces/generators.h"

namespace st::traces {
namespace {

using detail::require;

// The same steps with each rate replaced by rate_of(step).
template <typename RateOf>
Trace map_rates(const Trace& trace, RateOf rate_of) {
  std::vector<TraceStep> steps = trace.steps();
  for (auto& step : steps) step.mbps = rate_of(step);
  return Trace(std::move(steps), trace.source());
}

bool inside_any(double t_s, const std::vector<Outage>& outages) {
  return std::any_of(outages.begin(), outages.end(),
                     [&](const Outage& o) { return t_s >= o.start_s && t_s < o.start_s + o.duration_s; });
}

}  // namespace

Trace with_outages(const Trace& trace, const std::vector<Outage>& outages) {
  const double end_s = trace.duration_s();
  for (const auto& outage : outages) {
    require(std::isfinite(outage.start_s) && outage.start_s >= 0, "outage start", outage.start_s,
            "s must be finite and >= 0");
    require(outage.start_s < end_s, "outage start", outage.start_s,
            fmt::format("s is not before the trace's end, {} s", end_s));
    require(std::isfinite(outage.duration_s) && outage.duration_s > 0, "outage duration", outage.duration_s,
            "s must be finite and > 0");
  }
  // Every point where the rate may change: step starts and outage edges.
  std::vector<double> boundaries;
  for (const auto& step : trace.steps()) boundaries.push_back(step.time_s);
  for (const auto& outage : outages) {
    boundaries.push_back(outage.start_s);
    if (outage.start_s + outage.duration_s < end_s) boundaries.push_back(outage.start_s + outage.duration_s);
  }
  std::sort(boundaries.begin(), boundaries.end());
  boundaries.erase(std::unique(boundaries.begin(), boundaries.end()), boundaries.end());

  std::vector<TraceStep> steps;
  for (double time_s : boundaries) {
    TraceStep step = trace.step_at(time_s);
    step.time_s = time_s;
    if (inside_any(time_s, outages)) step.mbps = 0;
    steps.push_back(step);
  }
  return trace_ending_at(std::move(steps), end_s, trace.source());
}

Trace scale_to_mean(const Trace& trace, double target_mbps) {
  require(std::isfinite(target_mbps) && target_mbps >= 0, "target mean", target_mbps, "Mbps must be finite and >= 0");
  const double mean = trace.mean_mbps();
  if (!(mean > 0))
    throw std::invalid_argument(
        fmt::format("cannot scale {} to a mean of {} Mbps: its mean is 0 (no capacity at all)", trace.source(), target_mbps));
  const double factor = target_mbps / mean;
  return map_rates(trace, [&](const TraceStep& step) { return step.mbps * factor; });
}

Trace crop(const Trace& trace, double t0_s, double t1_s) {
  require(std::isfinite(t0_s) && t0_s >= 0, "crop start", t0_s, "s must be finite and >= 0");
  require(std::isfinite(t1_s) && t1_s > t0_s, "crop end", t1_s, fmt::format("s must be finite and after the start, {} s", t0_s));
  const double period_s = trace.duration_s();
  require((t1_s - t0_s) / period_s * static_cast<double>(trace.steps().size()) <= detail::kMaxSteps, "crop length",
          t1_s - t0_s, fmt::format("s would repeat the trace into more than {} steps", detail::kMaxSteps));
  // Walk steps and periods with counters (not by re-deriving them from the
  // time), so rounding at a period's end cannot stall the walk.
  double period_start_s = std::floor(t0_s / period_s) * period_s;
  std::size_t index = trace.step_index_at(t0_s - period_start_s);
  std::vector<TraceStep> steps;
  // Far past the start, time steps may vanish in rounding; a bounded walk
  // fails clearly instead of spinning.
  const double max_iterations = 2 * detail::kMaxSteps + 2 * static_cast<double>(trace.steps().size());
  double iterations = 0;
  for (double t_s = t0_s; t_s < t1_s;) {
    if (++iterations > max_iterations)
      throw std::invalid_argument(fmt::format("crop [{}, {}) s: times too large for the trace's step sizes", t0_s, t1_s));
    const double step_end_s = std::min(t1_s, period_start_s + trace.step_end_s(index));
    if (step_end_s > t_s) {
      TraceStep step = trace.steps()[index];
      step.time_s = t_s - t0_s;
      if (steps.empty() || step.time_s > steps.back().time_s) steps.push_back(step);
      t_s = step_end_s;
    }
    if (++index == trace.steps().size()) {
      index = 0;
      period_start_s += period_s;
    }
  }
  return trace_ending_at(std::move(steps), t1_s - t0_s, trace.source());
}

Trace loop_to(const Trace& trace, double duration_s) {
  detail::check_duration(duration_s);
  return crop(trace, 0, duration_s);
}

Trace clamp_rates(const Trace& trace, double min_mbps, double max_mbps) {
  require(std::isfinite(min_mbps) && min_mbps >= 0, "clamp min", min_mbps, "Mbps must be finite and >= 0");
  require(max_mbps >= min_mbps, "clamp max", max_mbps, fmt::format("Mbps must be >= min, {}", min_mbps));
  return map_rates(trace, [&](const TraceStep& step) { return std::clamp(step.mbps, min_mbps, max_mbps); });
}

Trace round_rates(const Trace& trace, double quantum_mbps) {
  require(std::isfinite(quantum_mbps) && quantum_mbps > 0, "rounding quantum", quantum_mbps, "Mbps must be finite and > 0");
  return map_rates(trace, [&](const TraceStep& step) {
    // Divide by the count of quanta per Mbps when that is whole: 115.123 then
    // prints as 115.123, not 115.12300000000001.
    const double per_mbps = 1 / quantum_mbps;
    if (std::abs(per_mbps - std::round(per_mbps)) < 1e-9) return std::round(step.mbps * per_mbps) / std::round(per_mbps);
    return std::round(step.mbps / quantum_mbps) * quantum_mbps;
  });
}

}  // namespace st::traces
