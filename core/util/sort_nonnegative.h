#pragma once
// Sorting non-negative floats (magnitudes) fast. Their IEEE 754 bit
// patterns, with the sign bit clear, order exactly like the values, so a
// least-significant-digit radix sort in two 16-bit passes over the bits sorts
// them in a few streaming passes. Written here because std::sort of a
// 60M-parameter model's gradient magnitudes was most of a timing run's setup
// (core/train/node/synthetic_gradients.cc) and Boost's spreadsort would add Boost
// to the GPU build's bundle (scripts/gpu/bundle.sh). Header-only, no torch.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace st {

// Sorts `values` ascending, the order std::sort gives. Every value must be
// non-negative (+0, subnormal, normal or +inf); a negative value or NaN is
// a std::invalid_argument, since the bit order would not be the value order.
inline void sort_nonnegative(std::vector<float>& values) {
  constexpr std::size_t kDigits = std::size_t{1} << 16;
  for (const float v : values)
    if (!(v >= 0.0f) || std::signbit(v)) throw std::invalid_argument("sort_nonnegative: a negative value or NaN");
  if (values.size() < kDigits) {  // below one histogram's size, std::sort is cheaper
    std::sort(values.begin(), values.end());
    return;
  }
  std::vector<uint32_t> keys(values.size()), scratch(values.size());
  std::memcpy(keys.data(), values.data(), values.size() * sizeof(float));
  std::vector<std::size_t> start(kDigits + 1);
  for (const int shift : {0, 16}) {  // low digit first; each pass is stable
    std::fill(start.begin(), start.end(), 0);
    for (const uint32_t k : keys) ++start[((k >> shift) & (kDigits - 1)) + 1];
    for (std::size_t d = 1; d <= kDigits; ++d) start[d] += start[d - 1];
    for (const uint32_t k : keys) scratch[start[(k >> shift) & (kDigits - 1)]++] = k;
    keys.swap(scratch);
  }
  std::memcpy(values.data(), keys.data(), values.size() * sizeof(float));
}

}  // namespace st
