// thresholdv16: cache-aware block selection (see compressors.h).
//
// Pass 1 (vectorised, the only pass over the gradient's n floats) writes the
// sum of |g| of every 16-float block. Selection then works on those n/16
// block sums: a filter at the predicted threshold keeps a few more blocks
// than needed and an exact trim keeps the best B. Pass 3 copies the chosen
// blocks, each one cache line. Unlike the original's scan that stopped when
// its output filled up, every block is considered, so the front of the
// tensor has no advantage.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/compress/compressors.h"
#include "core/compress/top_select.h"

namespace st::compress {
namespace {

constexpr std::size_t kBlock = 16;
// The filter runs a little below the predicted cutoff so that one pass over
// the block sums nearly always yields at least B candidates.
constexpr float kHintMargin = 0.97f;

std::size_t blocks_for(std::size_t n) { return (n + kBlock - 1) / kBlock; }

struct ThresholdV16State final : TensorState {
  ThresholdV16State(std::size_t n, std::size_t max_blocks)
      : sums(blocks_for(n)), chosen(max_blocks), selector(blocks_for(n), max_blocks) {}
  std::vector<float> sums;
  std::vector<uint32_t> chosen;
  TopSelector selector;
  double relative_threshold = 0.0;  // B-th largest block sum / L1 norm; 0 before the first call
};

}  // namespace

ThresholdV16::ThresholdV16(simd::Level simd) : kernels_(kernels(simd)) {}

std::size_t ThresholdV16::max_output(std::size_t numel, std::size_t k) const {
  return std::min(numel, blocks_for(k) * kBlock);
}

std::unique_ptr<TensorState> ThresholdV16::make_state(std::size_t numel, std::size_t max_k,
                                                      const std::string& tensor_name) const {
  const std::size_t max_blocks = std::min(blocks_for(numel), blocks_for(max_k));
  auto state = std::make_unique<ThresholdV16State>(numel, max_blocks);
  state->name = tensor_name;
  state->numel = numel;
  state->max_k = max_k;
  return state;
}

std::size_t ThresholdV16::compress(Span<const float> grad, std::size_t k, TensorState& base,
                                   SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& s = static_cast<ThresholdV16State&>(base);
  const float* g = grad.data();
  const std::size_t n = grad.size();
  if (n == 0) return 0;
  const std::size_t nb = s.sums.size();

  const double total = kernels_.block_abs_sums(g, n, s.sums.data());
  if (!std::isfinite(total)) throw_nonfinite(s, g, n);
  const std::size_t want_blocks = std::min(nb, blocks_for(std::min(k, n)));

  const float predicted = static_cast<float>(s.relative_threshold * total);
  const auto r = s.selector.select(kernels_, s.sums.data(), nb, want_blocks,
                                   predicted * kHintMargin, s.chosen.data());
  if (s.relative_threshold > 0.0 && want_blocks > 0) {
    // Diagnostic: how many elements the predicted threshold alone selects.
    std::size_t blocks_at_threshold = 0;
    if (r.passes == 1) {
      blocks_at_threshold = s.selector.count_candidates_at_least(s.sums.data(), predicted);
    } else {
      bool unused = false;
      blocks_at_threshold = kernels_.select_abs_ge(s.sums.data(), nb, predicted, nullptr, 0, &unused);
    }
    s.last_threshold_count = blocks_at_threshold * kBlock;
    s.last_threshold = predicted;
  } else {
    s.last_threshold_count = 0;  // no prediction before the first call
    s.last_threshold = 0.0f;
  }
  if (total > 0.0 && r.cutoff > 0.0f) s.relative_threshold = r.cutoff / total;

  std::size_t count = 0;
  for (std::size_t j = 0; j < r.count; ++j) {
    const std::size_t first = static_cast<std::size_t>(s.chosen[j]) * kBlock;
    const std::size_t len = std::min(kBlock, n - first);
    for (std::size_t e = 0; e < len; ++e) out.indices[count + e] = static_cast<uint32_t>(first + e);
    std::memcpy(out.values + count, g + first, len * sizeof(float));
    count += len;
  }
  return count;
}

}  // namespace st::compress
