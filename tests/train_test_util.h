#pragma once
// Helpers shared by the training tests.
#include <algorithm>
#include <cmath>
#include <vector>

namespace st::train {

// The largest elementwise difference between two parameter sets, over the
// largest magnitude in `b`: 0 iff equal as values (signed zeros aside).
inline double max_relative_difference(const std::vector<std::vector<float>>& a,
                                      const std::vector<std::vector<float>>& b) {
  double worst = 0, scale = 0;
  for (std::size_t l = 0; l < a.size(); ++l)
    for (std::size_t i = 0; i < a[l].size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(a[l][i]) - b[l][i]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[l][i])));
    }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace st::train
