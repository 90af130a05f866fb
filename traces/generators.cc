// Synthetic trace generators and the generic GeneratorSpec entry point.
#include "traces/generators.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "traces/generator_util.h"

namespace st::traces {
namespace {

using detail::require;

constexpr double kPi = 3.14159265358979323846;

// Our own draws on top of mt19937_64 (whose output the standard fixes):
// std::normal_distribution differs between standard libraries, and a seed
// should name the same trace everywhere.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {                                                              // Box-Muller
    if (spare_) {
      const double value = *spare_;
      spare_.reset();
      return value;
    }
    const double radius = std::sqrt(-2 * std::log(1 - uniform()));  // 1 - u is in (0, 1]
    const double angle = 2 * kPi * uniform();
    spare_ = radius * std::sin(angle);
    return radius * std::cos(angle);
  }
  std::size_t below(std::size_t n) { return std::min(n - 1, static_cast<std::size_t>(uniform() * static_cast<double>(n))); }

 private:
  std::mt19937_64 engine_;
  std::optional<double> spare_;
};

// A rate for each grid step, into a trace that lasts exactly duration_s.
template <typename RateOfStep>
Trace grid_trace(double duration_s, double step_s, const std::string& name, RateOfStep rate_of_step) {
  const std::size_t count = detail::grid_steps(duration_s, step_s);
  std::vector<TraceStep> steps(count);
  for (std::size_t i = 0; i < count; ++i) {
    steps[i].time_s = static_cast<double>(i) * step_s;
    const double end_s = std::min(duration_s, steps[i].time_s + step_s);
    steps[i].mbps = rate_of_step(i, steps[i].time_s, end_s);
  }
  return trace_ending_at(std::move(steps), duration_s, name);
}

}  // namespace

Trace constant_trace(double mbps, double duration_s, double step_s) {
  require(std::isfinite(mbps) && mbps >= 0, "mbps", mbps, "must be finite and >= 0");
  return grid_trace(duration_s, step_s, "<constant>", [&](std::size_t, double, double) { return mbps; });
}

Trace step_trace(const std::vector<std::pair<double, double>>& points, double duration_s) {
  if (points.empty()) throw std::invalid_argument("step: needs at least one (time_s, mbps) point");
  detail::check_duration(duration_s);
  std::vector<TraceStep> steps;
  for (const auto& [time_s, mbps] : points) {
    require(std::isfinite(time_s) && time_s >= 0 && (steps.empty() || time_s > steps.back().time_s), "point time",
            time_s, "must be finite, >= 0 and after the previous point");
    require(std::isfinite(mbps) && mbps >= 0, "point mbps", mbps, "must be finite and >= 0");
    require(time_s < duration_s, "point time", time_s, fmt::format("must be before the duration {} s", duration_s));
    steps.push_back(TraceStep{time_s, mbps});
  }
  return trace_ending_at(std::move(steps), duration_s, "<step>");
}

Trace square_trace(double low_mbps, double high_mbps, double period_s, double duration_s, double duty) {
  require(std::isfinite(low_mbps) && low_mbps >= 0, "low", low_mbps, "must be finite and >= 0");
  require(std::isfinite(high_mbps) && high_mbps >= 0, "high", high_mbps, "must be finite and >= 0");
  require(std::isfinite(period_s) && period_s > 0, "period", period_s, "must be finite and > 0");
  require(duty >= 0 && duty <= 1, "duty", duty, "must be in [0, 1]");
  detail::check_duration(duration_s);
  require(duration_s / period_s * 2 <= detail::kMaxSteps, "period", period_s, "is too short for the duration");
  std::vector<TraceStep> steps;
  auto add = [&](double time_s, double mbps) {
    if (time_s < duration_s && (steps.empty() || time_s > steps.back().time_s)) steps.push_back(TraceStep{time_s, mbps});
  };
  for (double k = 0; k * period_s < duration_s; k += 1) {
    add(k * period_s, duty > 0 ? high_mbps : low_mbps);
    if (duty > 0 && duty < 1) add((k + duty) * period_s, low_mbps);
  }
  return trace_ending_at(std::move(steps), duration_s, "<square>");
}

Trace sine_trace(double mean_mbps, double amplitude_mbps, double period_s, double duration_s, double step_s) {
  require(std::isfinite(mean_mbps) && mean_mbps >= 0, "mean", mean_mbps, "must be finite and >= 0");
  require(std::isfinite(amplitude_mbps) && amplitude_mbps >= 0, "amplitude", amplitude_mbps, "must be finite and >= 0");
  require(std::isfinite(period_s) && period_s > 0, "period", period_s, "must be finite and > 0");
  return grid_trace(duration_s, step_s, "<sine>", [&](std::size_t, double begin_s, double end_s) {
    const double middle_s = (begin_s + end_s) / 2;
    return std::max(0.0, mean_mbps + amplitude_mbps * std::sin(2 * kPi * middle_s / period_s));
  });
}

Trace ar1_trace(const Ar1Parameters& p, double duration_s, double step_s, std::uint64_t seed) {
  require(std::isfinite(p.mean_mbps) && p.mean_mbps >= 0, "mean", p.mean_mbps, "must be finite and >= 0");
  require(std::isfinite(p.spread_mbps) && p.spread_mbps >= 0, "spread", p.spread_mbps, "must be finite and >= 0");
  require(p.correlation >= 0 && p.correlation < 1, "correlation", p.correlation, "must be in [0, 1)");
  require(std::isfinite(p.floor_mbps) && p.floor_mbps >= 0, "floor", p.floor_mbps, "must be finite and >= 0");
  require(p.ceiling_mbps >= p.floor_mbps, "ceiling", p.ceiling_mbps, "must be >= floor");
  Random random(seed);
  const double innovation = std::sqrt(1 - p.correlation * p.correlation) * p.spread_mbps;
  double x = p.mean_mbps + p.spread_mbps * random.normal();
  return grid_trace(duration_s, step_s, "<ar1>", [&](std::size_t i, double, double) {
    if (i > 0) x = p.mean_mbps + p.correlation * (x - p.mean_mbps) + innovation * random.normal();
    return std::clamp(x, p.floor_mbps, p.ceiling_mbps);
  });
}

Trace markov_trace(const MarkovParameters& p, double duration_s, double step_s, std::uint64_t seed) {
  require(std::isfinite(p.mean_mbps) && p.mean_mbps >= 0, "mean", p.mean_mbps, "must be finite and >= 0");
  detail::grid_steps(duration_s, step_s);  // checked first: hold is compared with step_s
  require(p.states >= 2 && p.states <= 64, "states", p.states, "must be in [2, 64]");
  require(p.depth >= 0 && p.depth <= 1, "depth", p.depth, "must be in [0, 1]");
  require(std::isfinite(p.hold_s) && p.hold_s >= step_s, "hold", p.hold_s, "must be finite and >= the step");
  require(std::isfinite(p.noise_mbps) && p.noise_mbps >= 0, "noise", p.noise_mbps, "must be finite and >= 0");
  const auto states = static_cast<std::size_t>(p.states);
  auto level = [&](std::size_t state) {
    const double position = static_cast<double>(state) / static_cast<double>(states - 1);  // 0..1
    return p.mean_mbps * (1 - p.depth + 2 * p.depth * position);
  };
  Random random(seed);
  std::size_t state = random.below(states);
  const double leave_probability = step_s / p.hold_s;
  return grid_trace(duration_s, step_s, "<markov>", [&](std::size_t i, double, double) {
    if (i > 0 && random.uniform() < leave_probability) state = (state + 1 + random.below(states - 1)) % states;
    const double noise = p.noise_mbps > 0 ? p.noise_mbps * random.normal() : 0.0;
    return std::max(0.0, level(state) + noise);
  });
}

}  // namespace st::traces
