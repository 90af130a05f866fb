#include "core/control/traffic_model.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "core/compress/compressor.h"
#include "core/compress/wire.h"

namespace st::control {

double TrafficModel::bytes_per_iteration(double density) const {
  double per_chunk = 0;
  for (std::size_t n : numels) {
    if (n <= dense_up_to) {  // sent whole: priced as the wire encodes it, whatever the compressor
      per_chunk += static_cast<double>(
          compress::whole_chunk_size(n, fp16_values ? compress::ValueEncoding::kF16 : compress::ValueEncoding::kF32));
      continue;
    }
    const double k = static_cast<double>(compress::k_for_density(n, density));
    double index_bytes = 0;
    if (block_indices) {
      index_bytes = 4 * std::ceil(k / 16);  // thresholdv16 rounds k up to whole blocks
    } else {
      index_bytes = (n <= 65536 ? 2 : 4) * k;
    }
    const double values = block_indices ? 16 * std::ceil(k / 16) : k;
    per_chunk += 16 + index_bytes + values * (fp16_values ? 2 : 4);
  }
  return per_chunk * (nodes - 1);
}

DensityChoice choose_density(const TrafficModel& model, double bandwidth_mbps, double budget_ms, double lower,
                             double upper) {
  if (!(lower > 0 && upper <= 1 && lower <= upper))
    throw std::invalid_argument(fmt::format("density bounds [{}, {}] must satisfy 0 < lower <= upper <= 1", lower, upper));
  const double capacity_bytes = std::max(0.0, budget_ms) * 1e-3 * bandwidth_mbps * 1e6 / 8;
  DensityChoice c;
  c.budget_ms = budget_ms;
  auto fits = [&](double d) { return model.bytes_per_iteration(d) <= capacity_bytes; };
  if (!fits(lower)) {
    c.density = lower;
    c.at_lower_bound = true;
  } else if (fits(upper)) {
    c.density = upper;
    c.at_upper_bound = true;
  } else {
    // bytes grow with density; 40 halvings pin it far below k's resolution.
    double lo = lower, hi = upper;
    for (int i = 0; i < 40; ++i) {
      const double mid = 0.5 * (lo + hi);
      (fits(mid) ? lo : hi) = mid;
    }
    c.density = lo;
  }
  c.bytes = model.bytes_per_iteration(c.density);
  return c;
}

}  // namespace st::control
