#include "core/compress/compressor.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/compress/compressor_names.h"
#include "core/compress/compressors.h"

namespace st::compress {

NonFiniteGradient::NonFiniteGradient(const std::string& tensor, std::size_t index, float value)
    : std::runtime_error(fmt::format("non-finite gradient in tensor '{}' at index {} (value {})",
                                     tensor.empty() ? "<unnamed>" : tensor, index, value)),
      index_(index) {}

std::size_t Compressor::max_output(std::size_t numel, std::size_t k) const {
  return std::min(numel, k);
}

std::size_t k_for_density(std::size_t numel, double density) {
  if (!(density >= 0.0 && density <= 1.0))
    throw std::invalid_argument(fmt::format("density {} is outside [0, 1]", density));
  if (density == 0.0 || numel == 0) return 0;
  const auto k = static_cast<std::size_t>(std::llround(density * static_cast<double>(numel)));
  return std::clamp<std::size_t>(k, 1, numel);
}

void throw_nonfinite(const TensorState& state, const float* g, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(g[i])) throw NonFiniteGradient(state.name, i, g[i]);
  throw std::runtime_error(fmt::format(
      "gradient of tensor '{}' overflows float when summed (all values finite but huge)",
      state.name));
}

void check_compress_args(const Compressor& c, Span<const float> grad, std::size_t k,
                         const TensorState& state, SparseBuffers out) {
  if (grad.size() != state.numel)
    throw std::invalid_argument(fmt::format("{}: tensor '{}' has {} elements but the state was made for {}",
                                            c.name(), state.name, grad.size(), state.numel));
  if (k > state.max_k)
    throw std::invalid_argument(fmt::format("{}: k = {} exceeds the state's max_k = {} (tensor '{}')",
                                            c.name(), k, state.max_k, state.name));
  const std::size_t need = c.max_output(state.numel, k);
  if (out.capacity < need || (need > 0 && (out.indices == nullptr || out.values == nullptr)))
    throw std::invalid_argument(fmt::format("{}: output capacity {} is below the {} needed (tensor '{}')",
                                            c.name(), out.capacity, need, state.name));
}

std::unique_ptr<Compressor> make_compressor(const std::string& name, const CompressorOptions& options) {
  const std::string ef_prefix = "ef:", mc_prefix = "mc:", mcm_prefix = "mcm:", clip_prefix = "clip:";
  if (name.rfind(clip_prefix, 0) == 0)
    return std::make_unique<GradientClipping>(make_compressor(name.substr(clip_prefix.size()), options),
                                              options.clip_norm);
  if (name.rfind(ef_prefix, 0) == 0)
    return std::make_unique<ErrorFeedback>(make_compressor(name.substr(ef_prefix.size()), options),
                                           options.simd);
  if (name.rfind(mc_prefix, 0) == 0)
    return std::make_unique<MomentumCorrection>(make_compressor(name.substr(mc_prefix.size()), options),
                                                options.momentum, false);
  if (name.rfind(mcm_prefix, 0) == 0)
    return std::make_unique<MomentumCorrection>(make_compressor(name.substr(mcm_prefix.size()), options),
                                                options.momentum, true);
  if (name == "topk") return std::make_unique<TopK>(options.simd);
  if (name == "randomk") return std::make_unique<RandomK>(options.simd, options.seed);
  if (name == "thresholdv") return std::make_unique<ThresholdV>(options.simd);
  if (name == "thresholdv16") return std::make_unique<ThresholdV16>(options.simd);
  throw std::invalid_argument(fmt::format(
      "unknown compressor '{}' (known: {}, with optional 'ef:', 'mc:', 'mcm:' or 'clip:' prefixes)", name,
      joined_names()));
}

const Kernels& kernels(simd::Level level) {
  return level == simd::Level::kAvx2 ? avx2::kKernels : portable::kKernels;
}

}  // namespace st::compress
