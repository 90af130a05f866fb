#pragma once
// Shared helpers for the compressor tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/compress/compressor.h"
#include "core/simd/simd_level.h"

namespace st::compress::testing {

inline std::vector<simd::Level> simd_levels() {
  std::vector<simd::Level> levels{simd::Level::kPortable};
  if (simd::cpu_has_avx2()) levels.push_back(simd::Level::kAvx2);
  return levels;
}

inline std::vector<float> gaussian(std::size_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> g(n);
  for (auto& x : g) x = dist(rng);
  return g;
}

// A gradient with structure like a real one: per-"row" scales that vary over
// two orders of magnitude and heavy tails, so some 16-float blocks matter far
// more than others.
inline std::vector<float> structured(std::size_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 rng(seed);
  std::student_t_distribution<float> tail(3.0f);
  std::uniform_real_distribution<float> log_scale(-2.0f, 0.0f);
  std::vector<float> g(n);
  float row_scale = 1.0f;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 64 == 0) row_scale = std::pow(10.0f, log_scale(rng));
    g[i] = scale * row_scale * tail(rng);
  }
  return g;
}

struct Output {
  std::vector<uint32_t> indices;
  std::vector<float> values;
};

inline Output run(Compressor& c, TensorState& state, const std::vector<float>& g, std::size_t k) {
  const std::size_t cap = c.max_output(g.size(), k);
  Output out{std::vector<uint32_t>(cap), std::vector<float>(cap)};
  const std::size_t count = c.compress(Span<const float>(g), k, state, {out.indices.data(), out.values.data(), cap});
  out.indices.resize(count);
  out.values.resize(count);
  return out;
}

// Reference top-k: sort by (|g| descending, index ascending), take k, sort by index.
inline std::vector<uint32_t> reference_topk(const std::vector<float>& g, std::size_t k) {
  std::vector<uint32_t> idx(g.size());
  std::iota(idx.begin(), idx.end(), 0u);
  std::stable_sort(idx.begin(), idx.end(), [&](uint32_t a, uint32_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
  idx.resize(std::min(k, g.size()));
  std::sort(idx.begin(), idx.end());
  return idx;
}

inline void expect_strictly_increasing(const std::vector<uint32_t>& idx, std::size_t n) {
  for (std::size_t j = 0; j < idx.size(); ++j) {
    ASSERT_LT(idx[j], n) << "position " << j;
    if (j > 0) ASSERT_LT(idx[j - 1], idx[j]) << "position " << j;
  }
}

}  // namespace st::compress::testing
