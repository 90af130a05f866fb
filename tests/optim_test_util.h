#pragma once
// Shared by the sparse optimizer tests (optim_test.cc, optim_lazy_test.cc):
// random inputs, the relative-difference measure, and the fixture that runs
// a test for every SIMD level and thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/optim/sparse_optimizer.h"

namespace st::optim {

inline constexpr double kTolerance = 1e-6;

inline double relative_difference(const std::vector<float>& actual, const std::vector<float>& expected) {
  double worst = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    worst = std::max(worst, std::abs(static_cast<double>(actual[i]) - expected[i]));
    scale = std::max(scale, std::abs(static_cast<double>(expected[i])));
  }
  return scale == 0.0 ? worst : worst / scale;
}

inline std::vector<float> random_normal(std::size_t n, std::mt19937& rng, float stddev = 1.0f) {
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> v(n);
  for (auto& x : v) x = normal(rng);
  return v;
}

inline std::vector<uint32_t> all_indices(std::size_t n) {
  std::vector<uint32_t> indices(n);
  for (std::size_t i = 0; i < n; ++i) indices[i] = static_cast<uint32_t>(i);
  return indices;
}

// A mix of what compressors produce: whole 16-entry blocks (contiguous
// runs) and scattered single entries; sorted and unique.
inline std::vector<uint32_t> random_indices(std::size_t n, double density, std::mt19937& rng) {
  std::bernoulli_distribution pick(density);
  std::vector<uint32_t> indices;
  for (std::size_t block = 0; block < n; block += 16) {
    const bool whole_block = pick(rng) && pick(rng);
    for (std::size_t i = block; i < std::min(n, block + 16); ++i) {
      if (whole_block || pick(rng)) indices.push_back(static_cast<uint32_t>(i));
    }
  }
  return indices;
}

inline std::vector<float> values_at(const std::vector<float>& dense, const std::vector<uint32_t>& indices) {
  std::vector<float> values;
  for (uint32_t i : indices) values.push_back(dense[i]);
  return values;
}

struct ExecCase {
  simd::Level level;
  int threads;
};

class OptimExec : public ::testing::TestWithParam<ExecCase> {
 protected:
  void SetUp() override {
    if (GetParam().level == simd::Level::kAvx2 && !simd::cpu_has_avx2()) {
      GTEST_SKIP() << "this CPU lacks AVX2/FMA/F16C, so the AVX2 kernels cannot run";
    }
  }
  // min_parallel_nnz is tiny so that threads > 1 really splits the steps.
  ExecutionOptions exec() const { return ExecutionOptions{GetParam().level, GetParam().threads, 8}; }
};

inline std::string exec_name(const ::testing::TestParamInfo<ExecCase>& info) {
  return std::string(simd::level_name(info.param.level)) + "_threads" + std::to_string(info.param.threads);
}

}  // namespace st::optim
