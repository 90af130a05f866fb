#include "apps/bench/quality.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

namespace st::bench {
namespace {

double squared_norm(const std::vector<float>& v) {
  double s = 0.0;
  for (float x : v) s += static_cast<double>(x) * x;
  return s;
}

}  // namespace

SelectionQuality::SelectionQuality(const std::vector<float>& gradient)
    : squares_(gradient.size()), block_squares_((gradient.size() + 15) / 16, 0.0) {
  for (std::size_t i = 0; i < gradient.size(); ++i) {
    squares_[i] = static_cast<double>(gradient[i]) * gradient[i];
    block_squares_[i / 16] += squares_[i];
  }
}

double SelectionQuality::top_sum(std::vector<double>& values, std::size_t count) {
  count = std::min(count, values.size());
  if (count == 0) return 0.0;
  // nth_element only reorders, so the vector stays a valid multiset for the
  // next query.
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count - 1), values.end(),
                   std::greater<double>());
  return std::accumulate(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count), 0.0);
}

double SelectionQuality::l2_capture(const std::vector<float>& selected) const {
  const double best = top_sum(squares_, selected.size());
  return best > 0.0 ? std::sqrt(squared_norm(selected) / best) : 1.0;
}

double SelectionQuality::block_efficiency(const std::vector<float>& selected, std::size_t blocks) const {
  const double best = top_sum(block_squares_, blocks);
  return best > 0.0 ? std::sqrt(squared_norm(selected) / best) : 1.0;
}

}  // namespace st::bench
