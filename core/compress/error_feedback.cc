#include <algorithm>
#include <cmath>

#include "core/compress/compressors.h"

namespace st::compress {
namespace {

struct ErrorFeedbackState final : DecoratedState {
  ErrorFeedbackState(std::unique_ptr<TensorState> inner_state, std::size_t n)
      : DecoratedState(std::move(inner_state)), residual(n, 0.0f), accumulated(n, 0.0f) {}
  std::vector<float> residual;
  std::vector<float> accumulated;  // g + r of the call in progress
};

}  // namespace

ErrorFeedback::ErrorFeedback(std::unique_ptr<Compressor> inner, simd::Level simd)
    : CompressorDecorator(std::move(inner)), kernels_(kernels(simd)) {}

std::unique_ptr<TensorState> ErrorFeedback::make_state(std::size_t numel, std::size_t max_k,
                                                       const std::string& tensor_name) const {
  return make_decorated_state<ErrorFeedbackState>(numel, max_k, tensor_name);
}

std::size_t ErrorFeedback::compress(Span<const float> grad, std::size_t k, TensorState& base,
                                    SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& s = static_cast<ErrorFeedbackState&>(base);
  const std::size_t n = grad.size();
  // acc = g + r goes to a second buffer, so an error below leaves r intact.
  if (!kernels_.add(grad.data(), s.residual.data(), s.accumulated.data(), n)) {
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(grad[i])) throw NonFiniteGradient(s.name, i, grad[i]);
    throw_nonfinite(s, s.accumulated.data(), n);  // g + r overflowed
  }
  const std::size_t count = inner_->compress(Span<const float>(s.accumulated), k, *s.inner, out);
  // r <- acc - sent. The sent values are exactly acc at those indices, so
  // zeroing them makes sent + r == acc with no rounding at all.
  std::swap(s.residual, s.accumulated);
  for (std::size_t j = 0; j < count; ++j) s.residual[out.indices[j]] = 0.0f;
  s.take_inner_diagnostics();
  return count;
}

Span<const float> ErrorFeedback::residual(const TensorState& state) {
  return Span<const float>(static_cast<const ErrorFeedbackState&>(state).residual);
}

}  // namespace st::compress
