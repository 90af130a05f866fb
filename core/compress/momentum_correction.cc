#include "core/compress/compressors.h"

namespace st::compress {
namespace {

struct MomentumCorrectionState final : DecoratedState {
  MomentumCorrectionState(std::unique_ptr<TensorState> inner_state, std::size_t n)
      : DecoratedState(std::move(inner_state)), velocity(n, 0.0f) {}
  std::vector<float> velocity;
};

}  // namespace

MomentumCorrection::MomentumCorrection(std::unique_ptr<Compressor> inner, float momentum, bool masking)
    : CompressorDecorator(std::move(inner)), momentum_(momentum), masking_(masking) {}

std::unique_ptr<TensorState> MomentumCorrection::make_state(std::size_t numel, std::size_t max_k,
                                                            const std::string& tensor_name) const {
  return make_decorated_state<MomentumCorrectionState>(numel, max_k, tensor_name);
}

std::size_t MomentumCorrection::compress(Span<const float> grad, std::size_t k, TensorState& base,
                                         SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& s = static_cast<MomentumCorrectionState&>(base);
  auto& u = s.velocity;
  // u = m u + g, element by element in index order (the inner compressor
  // rejects a non-finite velocity, naming the tensor).
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = momentum_ * u[i] + grad[i];
  const std::size_t count = inner_->compress(Span<const float>(u), k, *s.inner, out);
  if (masking_)
    for (std::size_t j = 0; j < count; ++j) u[out.indices[j]] = 0.0f;
  s.take_inner_diagnostics();
  return count;
}

Span<const float> MomentumCorrection::velocity(const TensorState& state) {
  return Span<const float>(static_cast<const MomentumCorrectionState&>(state).velocity);
}

}  // namespace st::compress
