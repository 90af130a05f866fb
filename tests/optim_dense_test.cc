// DenseSgd (core/optim/dense_sgd.h), the dense systems' step: bit for bit
// the sparse SGD step over every index, which is how those systems stepped
// before it, for every option (momentum, dampening, Nesterov, weight decay,
// a learning-rate scale that changes between steps), both SIMD builds and
// one or two threads; and its refusals of bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "core/optim/dense_sgd.h"
#include "tests/optim_test_util.h"

namespace st::optim {
namespace {

// Not a multiple of 8 or 16: the vector loops' tails and the thread split
// (min_parallel_nnz is 8 in OptimExec) are exercised.
constexpr std::size_t kNumel = 4099;
constexpr int kSteps = 7;

// memcmp of null pointers is undefined even for zero bytes (no momentum: no buffer).
bool same_bits(const float* a, const float* b, std::size_t n) { return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0; }

// Gradients with the values that could tell two orders of operations apart:
// zeros of both signs, subnormals, large and tiny magnitudes.
std::vector<float> awkward_gradient(std::mt19937& rng) {
  std::vector<float> grad = random_normal(kNumel, rng);
  for (std::size_t i = 0; i < kNumel; i += 97) grad[i] = 0.0f;
  for (std::size_t i = 13; i < kNumel; i += 101) grad[i] = -0.0f;
  for (std::size_t i = 29; i < kNumel; i += 103) grad[i] = std::numeric_limits<float>::denorm_min() * 3;
  for (std::size_t i = 41; i < kNumel; i += 107) grad[i] = 1e30f;
  for (std::size_t i = 53; i < kNumel; i += 109) grad[i] = -1e-30f;
  return grad;
}

void expect_dense_equals_sparse_over_all_indices(const SgdOptions& options, const ExecutionOptions& exec) {
  std::mt19937 rng(2024);
  std::vector<float> dense_param = random_normal(kNumel, rng);
  std::vector<float> sparse_param = dense_param;
  DenseSgd dense(options, exec);
  auto sparse = make_sparse_sgd(options, exec);
  auto dense_state = dense.make_state(kNumel, "layer");
  auto sparse_state = sparse->make_state(kNumel, "layer");
  const std::vector<uint32_t> indices = all_indices(kNumel);
  for (int step = 0; step < kSteps; ++step) {
    // A warmup-like schedule: the scale changes every step.
    dense_state->lr_scale = sparse_state->lr_scale = 0.25 + 0.125 * step;
    const std::vector<float> grad = awkward_gradient(rng);
    dense.step(Span<float>(dense_param), Span<const float>(grad), *dense_state);
    sparse->step(Span<float>(sparse_param), SparseGrad{indices, grad}, *sparse_state);
    ASSERT_TRUE(same_bits(dense_param.data(), sparse_param.data(), kNumel)) << "parameters differ after step " << step;
    const auto& sparse_sgd_state = dynamic_cast<const SgdState&>(*sparse_state);
    ASSERT_EQ(dense_state->momentum_buffer.size(), sparse_sgd_state.momentum_buffer.size());
    ASSERT_TRUE(same_bits(dense_state->momentum_buffer.data(), sparse_sgd_state.momentum_buffer.data(),
                          dense_state->momentum_buffer.size()))
        << "momentum buffers differ after step " << step;
    ASSERT_EQ(dense_state->step, sparse_state->step);
  }
}

TEST_P(OptimExec, DenseStepEqualsSparseStepOverAllIndicesWithMomentumAndWeightDecay) {
  expect_dense_equals_sparse_over_all_indices({0.05, 0.9, 0.0, false, 1e-4}, exec());
}
TEST_P(OptimExec, DenseStepEqualsSparseStepOverAllIndicesWithMomentum) {
  expect_dense_equals_sparse_over_all_indices({0.1, 0.9, 0.0, false, 0.0}, exec());
}
TEST_P(OptimExec, DenseStepEqualsSparseStepOverAllIndicesWithDampening) {
  expect_dense_equals_sparse_over_all_indices({0.05, 0.9, 0.3, false, 5e-4}, exec());
}
TEST_P(OptimExec, DenseStepEqualsSparseStepOverAllIndicesWithNesterov) {
  expect_dense_equals_sparse_over_all_indices({0.05, 0.9, 0.0, true, 1e-4}, exec());
}
TEST_P(OptimExec, DenseStepEqualsSparseStepOverAllIndicesWithoutMomentum) {
  expect_dense_equals_sparse_over_all_indices({0.05, 0.0, 0.0, false, 1e-4}, exec());
  expect_dense_equals_sparse_over_all_indices({0.05, 0.0, 0.0, false, 0.0}, exec());
}

TEST(DenseSgd, PortableAndAvx2AgreeBitwise) {
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU lacks AVX2/FMA/F16C, so the AVX2 kernels cannot run";
  const SgdOptions options{0.05, 0.9, 0.0, true, 1e-4};
  DenseSgd portable(options, {simd::Level::kPortable, 1});
  DenseSgd avx2(options, {simd::Level::kAvx2, 1});
  std::mt19937 rng(5);
  std::vector<float> a = random_normal(kNumel, rng);
  std::vector<float> b = a;
  auto state_a = portable.make_state(kNumel);
  auto state_b = avx2.make_state(kNumel);
  for (int step = 0; step < kSteps; ++step) {
    const std::vector<float> grad = awkward_gradient(rng);
    portable.step(Span<float>(a), Span<const float>(grad), *state_a);
    avx2.step(Span<float>(b), Span<const float>(grad), *state_b);
  }
  EXPECT_TRUE(same_bits(a.data(), b.data(), kNumel));
}

TEST(DenseSgd, RejectsBadInputWithoutSideEffects) {
  DenseSgd sgd({0.05, 0.9, 0.0, false, 0.0});
  auto state = sgd.make_state(10, "fc.weight");
  std::vector<float> param(10, 1.0f);
  const std::vector<float> short_grad(9, 1.0f);
  try {
    sgd.step(Span<float>(param), Span<const float>(short_grad), *state);
    FAIL() << "accepted a gradient of the wrong size";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("fc.weight"), std::string::npos) << error.what();
  }
  EXPECT_EQ(state->step, 0u);
  EXPECT_EQ(param, std::vector<float>(10, 1.0f));
  DenseSgd plain({0.05, 0.0, 0.0, false, 0.0});
  const std::vector<float> grad(10, 1.0f);
  EXPECT_THROW(plain.step(Span<float>(param), Span<const float>(grad), *state), std::invalid_argument)
      << "a state with a momentum buffer, for an optimizer without momentum";
  EXPECT_THROW(DenseSgd({-1.0, 0.0, 0.0, false, 0.0}), std::invalid_argument);
  EXPECT_THROW(DenseSgd({0.1, 0.0, 0.0, true, 0.0}), std::invalid_argument) << "Nesterov without momentum";
}

}  // namespace
}  // namespace st::optim
