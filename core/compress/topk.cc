#include "core/compress/compressors.h"

#include <algorithm>

#include "core/compress/top_select.h"

namespace st::compress {
namespace {

struct TopKState final : TensorState {
  TopKState(std::size_t n, std::size_t k) : selector(n, k) {}
  TopSelector selector;
  float last_cutoff = 0.0f;
  // The next hint is last_cutoff x hint_ratio: 0.9 to start, then the
  // threshold/cutoff ratio of the last select that needed more than one
  // pass, so that a tensor whose tail keeps too many candidates at 0.9
  // (normal values at low density) is filtered in one pass from then on.
  float hint_ratio = 0.9f;
};

}  // namespace

TopK::TopK(simd::Level simd) : kernels_(kernels(simd)) {}

std::unique_ptr<TensorState> TopK::make_state(std::size_t numel, std::size_t max_k,
                                              const std::string& tensor_name) const {
  auto state = std::make_unique<TopKState>(numel, std::min(max_k, numel));
  state->name = tensor_name;
  state->numel = numel;
  state->max_k = max_k;
  return state;
}

std::size_t TopK::compress(Span<const float> grad, std::size_t k, TensorState& base,
                           SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& state = static_cast<TopKState&>(base);
  const std::size_t n = grad.size();
  if (n == 0) return 0;
  // The previous cutoff, lowered a little, is usually a good first filter
  // threshold for the next iteration's gradient of the same tensor.
  const float hint = state.last_cutoff * state.hint_ratio;
  const auto result = state.selector.select(kernels_, grad.data(), n, k, hint, out.indices);
  if (result.nonfinite) throw_nonfinite(state, grad.data(), n);
  if (result.cutoff > 0.0f) {
    state.last_cutoff = result.cutoff;
    // Floored at 0.5: a bisection that ended far below the cutoff (a
    // tensor of mostly zeros) would otherwise leave a hint that rounds to
    // 0, and a sample on every call.
    if (result.passes > 1 && result.threshold > 0.0f)
      state.hint_ratio = std::clamp(result.threshold / result.cutoff, 0.5f, 1.0f);
  }
  for (std::size_t j = 0; j < result.count; ++j) out.values[j] = grad[out.indices[j]];
  state.last_threshold = result.cutoff;
  state.last_threshold_count = result.count;
  return result.count;
}

}  // namespace st::compress
