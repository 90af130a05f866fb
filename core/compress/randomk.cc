#include <random>

#include "core/compress/compressors.h"

namespace st::compress {
namespace {

struct RandomKState final : TensorState {
  RandomKState(std::size_t n, uint64_t seed) : chosen((n + 63) / 64, 0), rng(seed) {}
  std::vector<uint64_t> chosen;  // one bit per element; all zero between calls
  std::mt19937_64 rng;           // mt19937_64's output is fixed by the standard
};

// Uniform in [0, bound) from raw 64-bit draws (Lemire's multiply-shift with
// rejection). std::uniform_int_distribution is implementation-defined, which
// would make selections differ between standard libraries.
uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  while (true) {
    const unsigned __int128 m = static_cast<unsigned __int128>(rng()) * bound;
    const auto low = static_cast<uint64_t>(m);
    if (low >= bound || low >= (-bound) % bound) return static_cast<uint64_t>(m >> 64);
  }
}

}  // namespace

RandomK::RandomK(simd::Level simd, uint64_t seed) : kernels_(kernels(simd)), seed_(seed) {}

std::unique_ptr<TensorState> RandomK::make_state(std::size_t numel, std::size_t max_k,
                                                 const std::string& tensor_name) const {
  auto state = std::make_unique<RandomKState>(numel, seed_);
  state->name = tensor_name;
  state->numel = numel;
  state->max_k = max_k;
  return state;
}

std::size_t RandomK::compress(Span<const float> grad, std::size_t k, TensorState& base,
                              SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& state = static_cast<RandomKState&>(base);
  const std::size_t n = grad.size();
  // The one full pass randomk makes: it rejects non-finite gradients like
  // every other compressor.
  bool nonfinite = false;
  kernels_.select_abs_ge(grad.data(), n, 3.402823466e38f, nullptr, 0, &nonfinite);
  if (nonfinite) throw_nonfinite(state, grad.data(), n);
  k = std::min(k, n);
  // Floyd's algorithm: k distinct indices with k draws; a bitmap marks them
  // so they come out sorted by one scan of n/64 words.
  for (std::size_t j = n - k; j < n; ++j) {
    std::size_t t = uniform_below(state.rng, j + 1);
    if (state.chosen[t / 64] >> (t % 64) & 1u) t = j;
    state.chosen[t / 64] |= uint64_t{1} << (t % 64);
  }
  std::size_t count = 0;
  for (std::size_t w = 0; w < state.chosen.size() && count < k; ++w) {
    uint64_t word = state.chosen[w];
    state.chosen[w] = 0;
    while (word) {
      const std::size_t i = w * 64 + static_cast<std::size_t>(__builtin_ctzll(word));
      out.indices[count] = static_cast<uint32_t>(i);
      out.values[count] = grad[i];
      ++count;
      word &= word - 1;
    }
  }
  state.last_threshold_count = count;
  return count;
}

}  // namespace st::compress
