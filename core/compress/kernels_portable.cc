// Baseline x86-64 kernels: plain loops the compiler vectorises with SSE2.
#include <Eigen/Core>
#include <cmath>

#include "core/compress/kernels.h"

namespace st::compress::portable {
namespace {

double block_abs_sums(const float* g, std::size_t n, float* sums) {
  double total = 0.0;
  const std::size_t full = n / 16;
  for (std::size_t b = 0; b < full; ++b) {
    const float* p = g + 16 * b;
    // Two interleaved partial sums, the same association as the AVX2 kernel
    // (lane j adds elements j and j+8, then a fixed reduction tree).
    float lane[8];
    for (int j = 0; j < 8; ++j) lane[j] = std::fabs(p[j]) + std::fabs(p[j + 8]);
    const float s = ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                    ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    sums[b] = s;
    total += s;
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
  std::size_t count = 0;
  bool bad = false;
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    bad |= !(a <= 3.402823466e38f);  // NaN or Inf
    if (a >= threshold) {
      if (count < capacity) out[count] = static_cast<uint32_t>(i);
      ++count;
    }
  }
  *nonfinite = bad;
  return count;
}

bool add(const float* a, const float* b, float* out, std::size_t n) {
  bool finite = true;
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = a[i] + b[i];
    finite &= std::fabs(out[i]) <= 3.402823466e38f;
  }
  return finite;
}

// Eigen::half converts with round-to-nearest-even in software on the
// baseline target, matching F16C's VCVTPS2PH exactly.
void to_half(const float* in, uint16_t* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Eigen::numext::bit_cast<uint16_t>(Eigen::half(in[i]));
}

void from_half(const uint16_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(in[i]));
}

}  // namespace

const Kernels kKernels{block_abs_sums, select_abs_ge, add, to_half, from_half};

}  // namespace st::compress::portable
