#include "apps/monotone_fit.h"

#include <utility>

namespace st::apps {

std::vector<double> isotonic_fit(const std::vector<double>& values) {
  struct Block {
    double mean;
    std::size_t count;
  };
  std::vector<Block> blocks;
  for (const double value : values) {
    blocks.push_back({value, 1});
    // A block below the one before it violates the order: pool the two.
    while (blocks.size() > 1 && blocks[blocks.size() - 2].mean > blocks.back().mean) {
      const Block last = blocks.back();
      blocks.pop_back();
      Block& before = blocks.back();
      const std::size_t total = before.count + last.count;
      // The products in statements of their own: a compiler that fuses a
      // multiply into the add (clang's default) would round differently
      // from analysis/monotone_tta.py, and a crossing at a tie could move.
      const double before_sum = before.mean * static_cast<double>(before.count);
      const double last_sum = last.mean * static_cast<double>(last.count);
      before.mean = (before_sum + last_sum) / static_cast<double>(total);
      before.count = total;
    }
  }
  std::vector<double> fitted;
  fitted.reserve(values.size());
  for (const auto& block : blocks) fitted.insert(fitted.end(), block.count, block.mean);
  return fitted;
}

std::optional<std::size_t> first_reaching(const std::vector<double>& values, double target) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] >= target) return i;
  return std::nullopt;
}

std::optional<std::size_t> fit_reaching(const std::vector<double>& values, double target) {
  return first_reaching(isotonic_fit(values), target);
}

}  // namespace st::apps
