#pragma once
// Argument checks shared by the generators and transforms (internal to st_traces).
#include <fmt/format.h>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace st::traces::detail {

// More steps than this is a mistake (10 million 1 s steps is 115 days), and
// would exhaust memory rather than fail clearly.
constexpr double kMaxSteps = 10'000'000;

template <typename Value>
void require(bool ok, const std::string& name, Value value, const std::string& what) {
  if (!ok) throw std::invalid_argument(fmt::format("{} = {} {}", name, value, what));
}

inline void check_duration(double duration_s) {
  require(std::isfinite(duration_s) && duration_s > 0, "duration", duration_s, "s must be finite and > 0");
}

// Number of grid steps of step_s covering duration_s (the last may be shorter).
inline std::size_t grid_steps(double duration_s, double step_s) {
  check_duration(duration_s);
  require(std::isfinite(step_s) && step_s > 0, "step", step_s, "s must be finite and > 0");
  const double count = std::ceil(duration_s / step_s - 1e-9);
  require(count <= kMaxSteps, "step", step_s,
          fmt::format("s gives {} steps over {} s, more than {}", count, duration_s, kMaxSteps));
  return static_cast<std::size_t>(std::max(1.0, count));
}

}  // namespace st::traces::detail
