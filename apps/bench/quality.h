#pragma once
// Quality measures of a sparse selection against the best possible one.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace st::bench {

class SelectionQuality {
 public:
  explicit SelectionQuality(const std::vector<float>& gradient);
  // L2 norm of the selected values / L2 norm of the exact top-`count` values.
  double l2_capture(const std::vector<float>& selected_values) const;
  // L2 norm of the selected values / L2 norm of the best choice of the same
  // number of whole 16-float blocks (by sum of squares; the tensor's last
  // block may be short). `blocks` is the number of blocks selected.
  double block_efficiency(const std::vector<float>& selected_values, std::size_t blocks) const;

 private:
  static double top_sum(std::vector<double>& values, std::size_t count);
  mutable std::vector<double> squares_;
  mutable std::vector<double> block_squares_;
};

}  // namespace st::bench
