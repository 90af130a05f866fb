#pragma once
// The inner loops of the compressors and wire encodings, compiled twice:
// kernels_portable.cc for the x86-64 baseline and kernels_avx2.cc with
// AVX2/FMA/F16C. Both must give identical results (tests run both).
#include <cstddef>
#include <cstdint>

#include "core/simd/simd_level.h"

namespace st::compress {

struct Kernels {
  // Writes sums[b] = sum of |g[16b .. 16b+15]| (the last block may be short)
  // for every block b < ceil(n/16), and returns the total. A NaN or Inf in g
  // makes the total non-finite.
  double (*block_abs_sums)(const float* g, std::size_t n, float* sums);

  // Stores, in increasing order, the indices i with |x[i]| >= threshold into
  // out (at most capacity of them) and returns how many there are in total
  // (which may exceed capacity). Sets *nonfinite when x holds a NaN or Inf.
  std::size_t (*select_abs_ge)(const float* x, std::size_t n, float threshold, uint32_t* out,
                               std::size_t capacity, bool* nonfinite);

  // out[i] = a[i] + b[i]; returns true when every result is finite.
  bool (*add)(const float* a, const float* b, float* out, std::size_t n);

  // IEEE binary16 conversions, round to nearest even.
  void (*to_half)(const float* in, uint16_t* out, std::size_t n);
  void (*from_half)(const uint16_t* in, float* out, std::size_t n);
};

const Kernels& kernels(simd::Level level);

namespace portable {
extern const Kernels kKernels;
}
namespace avx2 {
extern const Kernels kKernels;
}

}  // namespace st::compress
