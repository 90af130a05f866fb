#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/compress/compressors.h"

namespace st::compress {
namespace {

struct GradientClippingState final : DecoratedState {
  GradientClippingState(std::unique_ptr<TensorState> inner_state, std::size_t n)
      : DecoratedState(std::move(inner_state)), scaled(n, 0.0f) {}
  std::vector<float> scaled;  // the clipped gradient of the call in progress
  std::size_t seen = 0;
  std::size_t clipped = 0;
  double norm_sum = 0;  // of the norms before clipping; counts() derives the mean
  double largest_norm = 0;
};

}  // namespace

GradientClipping::GradientClipping(std::unique_ptr<Compressor> inner, float max_norm)
    : CompressorDecorator(std::move(inner)), max_norm_(max_norm) {
  if (!(max_norm > 0.0f) || !std::isfinite(max_norm))
    throw std::invalid_argument(fmt::format("clip: the largest gradient norm must be a positive number, not {}", max_norm));
}

std::unique_ptr<TensorState> GradientClipping::make_state(std::size_t numel, std::size_t max_k,
                                                          const std::string& tensor_name) const {
  return make_decorated_state<GradientClippingState>(numel, max_k, tensor_name);
}

std::size_t GradientClipping::compress(Span<const float> grad, std::size_t k, TensorState& base,
                                       SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& s = static_cast<GradientClippingState&>(base);
  const Eigen::Map<const Eigen::VectorXf> g(grad.data(), static_cast<Eigen::Index>(grad.size()));
  // The norm in double: a float sum of a million squares loses the digits
  // the comparison needs. A non-finite norm is passed on unclipped, and the
  // inner compressor rejects it naming the first bad entry.
  const double norm = std::sqrt(g.cast<double>().squaredNorm());
  const bool clip = std::isfinite(norm) && norm > max_norm_;
  if (clip) Eigen::Map<Eigen::VectorXf>(s.scaled.data(), g.size()) = g * static_cast<float>(max_norm_ / norm);
  const std::size_t count = inner_->compress(clip ? Span<const float>(s.scaled) : grad, k, *s.inner, out);
  // Counted once the inner compressor took the step: one that throws leaves
  // every state as it was.
  ++s.seen;
  if (clip) ++s.clipped;
  s.norm_sum += norm;
  s.largest_norm = std::max(s.largest_norm, norm);
  s.take_inner_diagnostics();
  return count;
}

GradientClipping::Counts GradientClipping::counts(const TensorState& state) {
  const auto& s = static_cast<const GradientClippingState&>(state);
  return {s.seen, s.clipped, s.seen ? s.norm_sum / static_cast<double>(s.seen) : 0.0, s.largest_norm};
}

}  // namespace st::compress
