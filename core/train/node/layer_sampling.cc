#include "core/train/node/layer_sampling.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace st::train {
namespace {

constexpr std::size_t kBlock = 16;

std::size_t round_up_to_block(std::size_t n) { return (n + kBlock - 1) / kBlock * kBlock; }

std::size_t sample_size(std::size_t full, const StageSampling& sampling) {
  if (!sampling.enabled() || full <= sampling.min_elements) return full;
  const auto share = static_cast<std::size_t>(std::ceil(static_cast<double>(full) * sampling.fraction));
  return std::min(full, round_up_to_block(std::max(share, sampling.min_elements)));
}

}  // namespace

LayerSampling::LayerSampling(std::vector<std::size_t> full_numels, StageSampling sampling)
    : full_(std::move(full_numels)) {
  if (!(sampling.fraction >= 0 && sampling.fraction <= 1))
    throw std::invalid_argument(fmt::format("stage sampling: fraction {} is not in [0, 1]", sampling.fraction));
  if (sampling.min_elements < kBlock)
    throw std::invalid_argument(
        fmt::format("stage sampling: min_elements {} is below one block of {}", sampling.min_elements, kBlock));
  double full_total = 0, sampled_total = 0;
  for (std::size_t n : full_) {
    numels_.push_back(sample_size(n, sampling));
    sampled_ = sampled_ || numels_.back() != n;
    full_total += static_cast<double>(n);
    sampled_total += static_cast<double>(numels_.back());
  }
  total_scale_ = sampled_total > 0 ? full_total / sampled_total : 1;
}

double LayerSampling::scale(std::size_t layer) const {
  const std::size_t n = numels_.at(layer);
  return n == 0 ? 1 : static_cast<double>(full_[layer]) / static_cast<double>(n);
}

}  // namespace st::train
