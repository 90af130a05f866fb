// AVX2/FMA/F16C kernels. This file alone is compiled with those flags and is
// only called after simd::cpu_has_avx2() said yes. Results are bit-identical
// to kernels_portable.cc: the same association order everywhere.
#include <immintrin.h>

#include <cmath>

#include "core/compress/kernels.h"

namespace st::compress::avx2 {
namespace {

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// Lane j of the result = |p[j]| + |p[j+8]|.
inline __m256 block_lanes(const float* p) {
  return _mm256_add_ps(abs_ps(_mm256_loadu_ps(p)), abs_ps(_mm256_loadu_ps(p + 8)));
}

// Eight blocks at once: reduces eight lane vectors to eight block sums with
// the tree ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) of the portable kernel.
inline __m256 reduce8(const __m256 v[8]) {
  const __m256 h01 = _mm256_hadd_ps(v[0], v[1]);
  const __m256 h23 = _mm256_hadd_ps(v[2], v[3]);
  const __m256 h45 = _mm256_hadd_ps(v[4], v[5]);
  const __m256 h67 = _mm256_hadd_ps(v[6], v[7]);
  const __m256 q0 = _mm256_hadd_ps(h01, h23);  // per 128-bit half: v0..v3 partials
  const __m256 q1 = _mm256_hadd_ps(h45, h67);
  const __m256 lo = _mm256_permute2f128_ps(q0, q1, 0x20);
  const __m256 hi = _mm256_permute2f128_ps(q0, q1, 0x31);
  return _mm256_add_ps(lo, hi);  // order: v0 v1 v2 v3 v4 v5 v6 v7
}

inline float reduce1(__m256 v) {
  alignas(32) float lane[8];
  _mm256_store_ps(lane, v);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

double block_abs_sums(const float* g, std::size_t n, float* sums) {
  double total = 0.0;
  const std::size_t full = n / 16;
  std::size_t b = 0;
  for (; b + 8 <= full; b += 8) {
    __m256 lanes[8];
    for (int j = 0; j < 8; ++j) lanes[j] = block_lanes(g + 16 * (b + j));
    _mm256_storeu_ps(sums + b, reduce8(lanes));
    for (int j = 0; j < 8; ++j) total += sums[b + j];
  }
  for (; b < full; ++b) {
    sums[b] = reduce1(block_lanes(g + 16 * b));
    total += sums[b];
  }
  if (full * 16 < n) {
    float s = 0.0f;
    for (std::size_t i = full * 16; i < n; ++i) s += std::fabs(g[i]);
    sums[full] = s;
    total += s;
  }
  return total;
}

std::size_t select_abs_ge(const float* x, std::size_t n, float threshold, uint32_t* out,
                          std::size_t capacity, bool* nonfinite) {
  const __m256 thr = _mm256_set1_ps(threshold);
  const __m256 max_finite = _mm256_set1_ps(3.402823466e38f);
  __m256 bad = _mm256_setzero_ps();
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 a = abs_ps(_mm256_loadu_ps(x + i));
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, max_finite, _CMP_NLE_UQ));
    unsigned mask = static_cast<unsigned>(_mm256_movemask_ps(_mm256_cmp_ps(a, thr, _CMP_GE_OQ)));
    // Selected elements are rare (a few percent): walk the set bits.
    while (mask) {
      const unsigned lane = static_cast<unsigned>(__builtin_ctz(mask));
      if (count < capacity) out[count] = static_cast<uint32_t>(i + lane);
      ++count;
      mask &= mask - 1;
    }
  }
  bool tail_bad = false;
  for (; i < n; ++i) {
    const float a = std::fabs(x[i]);
    tail_bad |= !(a <= 3.402823466e38f);
    if (a >= threshold) {
      if (count < capacity) out[count] = static_cast<uint32_t>(i);
      ++count;
    }
  }
  *nonfinite = tail_bad || _mm256_movemask_ps(bad) != 0;
  return count;
}

bool add(const float* a, const float* b, float* out, std::size_t n) {
  const __m256 max_finite = _mm256_set1_ps(3.402823466e38f);
  __m256 bad = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 s = _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
    _mm256_storeu_ps(out + i, s);
    bad = _mm256_or_ps(bad, _mm256_cmp_ps(abs_ps(s), max_finite, _CMP_NLE_UQ));
  }
  bool finite = _mm256_movemask_ps(bad) == 0;
  for (; i < n; ++i) {
    out[i] = a[i] + b[i];
    finite &= std::fabs(out[i]) <= 3.402823466e38f;
  }
  return finite;
}

void to_half(const float* in, uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = static_cast<uint16_t>(_cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT));
}

void from_half(const uint16_t* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) out[i] = _cvtsh_ss(in[i]);
}

}  // namespace

const Kernels kKernels{block_abs_sums, select_abs_ge, add, to_half, from_half};

}  // namespace st::compress::avx2
