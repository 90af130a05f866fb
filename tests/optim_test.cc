// Sparse optimizers (core/optim): equality with torch::optim at density 100%,
// the lazy semantics of docs/optim.md at partial density, input validation,
// and independence from SIMD level and thread count.
//
// "Relative difference" below is max_i |a_i - b_i| / max_i |b_i|: the worst
// error measured against the scale of the reference tensor.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/optim/sparse_optimizer.h"
#include "tests/optim_test_util.h"

namespace st::optim {
namespace {

class SingleTorchThread : public ::testing::Environment {
 public:
  void SetUp() override { at::set_num_threads(1); }
};
const auto* const kTorchEnvironment = ::testing::AddGlobalTestEnvironment(new SingleTorchThread);

std::vector<float> to_vector(const torch::Tensor& t) {
  const float* data = t.data_ptr<float>();
  return std::vector<float>(data, data + t.numel());
}

torch::Tensor to_tensor(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, torch::kFloat).clone();
}

// --- reference implementations of docs/optim.md, one entry at a time -----

uint32_t missed(uint32_t last, uint32_t t) { return last == 0 ? 0 : t - last - 1; }
float power(double base, uint32_t exponent) { return static_cast<float>(std::pow(base, exponent)); }

struct ReferenceSgd {
  SgdOptions o;
  std::vector<float> buf;
  std::vector<uint32_t> last;
  uint32_t t = 0;

  void step(std::vector<float>& p, const std::vector<uint32_t>& idx, const std::vector<float>& g) {
    ++t;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const uint32_t i = idx[j];
      float d = o.weight_decay != 0 ? g[j] + static_cast<float>(o.weight_decay) * p[i] : g[j];
      if (o.momentum != 0) {
        const float m = static_cast<float>(o.momentum);
        const float decayed = buf[i] * power(o.momentum, missed(last[i], t));
        buf[i] = last[i] == 0 ? d : m * decayed + static_cast<float>(1 - o.dampening) * d;
        last[i] = t;
        d = o.nesterov ? d + m * buf[i] : buf[i];
      }
      p[i] = p[i] + static_cast<float>(-o.lr) * d;
    }
  }
};

struct ReferenceAdam {
  AdamOptions o;
  std::vector<float> m, v;
  std::vector<uint32_t> last;
  uint32_t t = 0;

  void step(std::vector<float>& p, const std::vector<uint32_t>& idx, const std::vector<float>& grad) {
    ++t;
    const float neg_step = static_cast<float>(-(o.lr / (1 - std::pow(o.beta1, t))));
    const float sqrt_bc2 = static_cast<float>(std::sqrt(1 - std::pow(o.beta2, t)));
    for (std::size_t j = 0; j < idx.size(); ++j) {
      const uint32_t i = idx[j];
      const float g = o.weight_decay != 0 ? grad[j] + static_cast<float>(o.weight_decay) * p[i] : grad[j];
      const uint32_t k = missed(last[i], t);
      m[i] = static_cast<float>(o.beta1) * (m[i] * power(o.beta1, k)) + static_cast<float>(1 - o.beta1) * g;
      v[i] = static_cast<float>(o.beta2) * (v[i] * power(o.beta2, k)) + static_cast<float>(1 - o.beta2) * g * g;
      last[i] = t;
      const float denom = std::sqrt(v[i]) / sqrt_bc2 + static_cast<float>(o.eps);
      p[i] = p[i] + neg_step * m[i] / denom;
    }
  }
};

// --- parameterised over SIMD level and thread count -----------------------

INSTANTIATE_TEST_SUITE_P(Levels, OptimExec,
                         ::testing::Values(ExecCase{simd::Level::kPortable, 1}, ExecCase{simd::Level::kPortable, 2},
                                           ExecCase{simd::Level::kAvx2, 1}, ExecCase{simd::Level::kAvx2, 2}),
                         exec_name);

constexpr std::size_t kDenseSize = 1003;  // not a multiple of 8: exercises the tails
constexpr int kDenseSteps = 25;

void expect_dense_sgd_matches_torch(const SgdOptions& o, const ExecutionOptions& exec) {
  std::mt19937 rng(7);
  std::vector<float> ours = random_normal(kDenseSize, rng);
  torch::Tensor theirs = to_tensor(ours).requires_grad_(true);
  torch::optim::SGD torch_sgd(
      {theirs},
      torch::optim::SGDOptions(o.lr).momentum(o.momentum).dampening(o.dampening).nesterov(o.nesterov).weight_decay(
          o.weight_decay));
  auto sgd = make_sparse_sgd(o, exec);
  auto state = sgd->make_state(kDenseSize, "dense");
  const std::vector<uint32_t> indices = all_indices(kDenseSize);
  for (int s = 0; s < kDenseSteps; ++s) {
    const std::vector<float> grad = random_normal(kDenseSize, rng);
    theirs.mutable_grad() = to_tensor(grad);
    torch_sgd.step();
    sgd->step(ours, SparseGrad{indices, grad}, *state);
  }
  EXPECT_LE(relative_difference(ours, to_vector(theirs.detach())), kTolerance);
}

TEST_P(OptimExec, DenseSgdMomentumMatchesTorch) {
  expect_dense_sgd_matches_torch({0.05, 0.9, 0.0, false, 1e-4}, exec());
}
TEST_P(OptimExec, DenseSgdDampeningMatchesTorch) {
  expect_dense_sgd_matches_torch({0.05, 0.9, 0.3, false, 1e-4}, exec());
}
TEST_P(OptimExec, DenseSgdNesterovMatchesTorch) {
  expect_dense_sgd_matches_torch({0.05, 0.9, 0.0, true, 1e-4}, exec());
}
TEST_P(OptimExec, DenseSgdPlainMatchesTorch) { expect_dense_sgd_matches_torch({0.05, 0.0, 0.0, false, 1e-4}, exec()); }

TEST_P(OptimExec, DenseAdamMatchesTorch) {
  const AdamOptions o{1e-2, 0.9, 0.999, 1e-8, 1e-4};
  std::mt19937 rng(11);
  std::vector<float> ours = random_normal(kDenseSize, rng);
  torch::Tensor theirs = to_tensor(ours).requires_grad_(true);
  torch::optim::Adam torch_adam(
      {theirs}, torch::optim::AdamOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(o.weight_decay));
  auto adam = make_sparse_adam(o, exec());
  auto state = adam->make_state(kDenseSize, "dense");
  const std::vector<uint32_t> indices = all_indices(kDenseSize);
  for (int s = 0; s < kDenseSteps; ++s) {
    const std::vector<float> grad = random_normal(kDenseSize, rng);
    theirs.mutable_grad() = to_tensor(grad);
    torch_adam.step();
    adam->step(ours, SparseGrad{indices, grad}, *state);
  }
  EXPECT_LE(relative_difference(ours, to_vector(theirs.detach())), kTolerance);
}

// Partial density against the reference; untouched entries must not move.
// 80 steps at low density also produce gaps beyond the 64-entry power table.
template <class Reference>
void expect_lazy_matches_reference(SparseOptimizer& opt, Reference& ref, std::size_t n) {
  std::mt19937 rng(3);
  std::vector<float> ours = random_normal(n, rng);
  std::vector<float> expected = ours;
  auto state = opt.make_state(n, "lazy");
  for (int s = 0; s < 80; ++s) {
    const std::vector<uint32_t> indices = random_indices(n, s % 10 == 0 ? 0.6 : 0.08, rng);
    const std::vector<float> values = values_at(random_normal(n, rng), indices);
    const std::vector<float> before = ours;
    opt.step(ours, SparseGrad{indices, values}, *state);
    ref.step(expected, indices, values);
    std::vector<bool> touched(n, false);
    for (uint32_t i : indices) touched[i] = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (!touched[i]) {
        ASSERT_EQ(ours[i], before[i]) << "untouched entry " << i << " changed at step " << s + 1;
      }
    }
  }
  EXPECT_LE(relative_difference(ours, expected), kTolerance);
}

TEST_P(OptimExec, LazySgdMatchesReference) {
  for (const SgdOptions& o : {SgdOptions{0.05, 0.9, 0.2, false, 1e-4}, SgdOptions{0.05, 0.8, 0.0, true, 0.0}}) {
    const std::size_t n = 3001;
    ReferenceSgd ref{o, std::vector<float>(n, 0.0f), std::vector<uint32_t>(n, 0)};
    auto sgd = make_sparse_sgd(o, exec());
    expect_lazy_matches_reference(*sgd, ref, n);
  }
}

TEST_P(OptimExec, LazyAdamMatchesReference) {
  const AdamOptions o{1e-2, 0.9, 0.99, 1e-8, 1e-4};
  const std::size_t n = 3001;
  ReferenceAdam ref{o, std::vector<float>(n, 0.0f), std::vector<float>(n, 0.0f), std::vector<uint32_t>(n, 0)};
  auto adam = make_sparse_adam(o, exec());
  expect_lazy_matches_reference(*adam, ref, n);
}

// Step-by-step example from docs/optim.md: touched at steps 1 and 4, the
// buffer is decayed by momentum^2 for the two missed steps.
TEST_P(OptimExec, SgdMomentumDecaysOverMissedSteps) {
  auto sgd = make_sparse_sgd({0.1, 0.9, 0.0, false, 0.0}, exec());
  auto state = sgd->make_state(1, "one");
  std::vector<float> p{2.0f};
  const std::vector<uint32_t> idx{0};
  const std::vector<float> g{1.0f};
  sgd->step(p, SparseGrad{idx, g}, *state);
  EXPECT_EQ(p[0], 2.0f + -0.1f * 1.0f);
  const float after_first = p[0];
  sgd->step(p, SparseGrad{}, *state);
  sgd->step(p, SparseGrad{}, *state);
  EXPECT_EQ(p[0], after_first);
  sgd->step(p, SparseGrad{idx, g}, *state);
  const float buf = 0.9f * (1.0f * static_cast<float>(0.9 * 0.9)) + 1.0f * 1.0f;
  const auto& sgd_state = dynamic_cast<const SgdState&>(*state);
  EXPECT_EQ(sgd_state.momentum_buffer[0], buf);
  EXPECT_EQ(sgd_state.last_step[0], 4u);
  EXPECT_EQ(state->step, 4u);
  EXPECT_EQ(p[0], after_first + -0.1f * buf);
}

TEST_P(OptimExec, AdamMomentsDecayOverMissedSteps) {
  const AdamOptions o{0.1, 0.9, 0.99, 1e-8, 0.0};
  auto adam = make_sparse_adam(o, exec());
  auto state = adam->make_state(1, "one");
  std::vector<float> p{0.5f};
  const std::vector<uint32_t> idx{0};
  const std::vector<float> g{2.0f};
  adam->step(p, SparseGrad{idx, g}, *state);
  adam->step(p, SparseGrad{}, *state);
  adam->step(p, SparseGrad{}, *state);
  adam->step(p, SparseGrad{idx, g}, *state);
  const float m1 = 0.9f * 0.0f + static_cast<float>(1 - 0.9) * 2.0f;
  const float v1 = 0.99f * 0.0f + static_cast<float>(1 - 0.99) * 2.0f * 2.0f;
  const auto& s = dynamic_cast<const AdamState&>(*state);
  EXPECT_EQ(s.exp_avg[0], 0.9f * (m1 * static_cast<float>(0.9 * 0.9)) + static_cast<float>(1 - 0.9) * 2.0f);
  const float v4 = 0.99f * (v1 * static_cast<float>(std::pow(0.99, 2))) + static_cast<float>(1 - 0.99) * 2.0f * 2.0f;
  EXPECT_EQ(s.exp_avg_sq[0], v4);
}

// Gaps beyond the 64-entry power table take the pow() path, in contiguous
// blocks and in gathered ones alike.
TEST_P(OptimExec, LongGapsMatchReference) {
  const SgdOptions o{0.05, 0.95, 0.0, false, 1e-4};
  const std::size_t n = 64;
  ReferenceSgd ref{o, std::vector<float>(n, 0.0f), std::vector<uint32_t>(n, 0)};
  auto sgd = make_sparse_sgd(o, exec());
  auto state = sgd->make_state(n, "gaps");
  std::mt19937 rng(9);
  std::vector<float> ours = random_normal(n, rng), expected = ours;
  std::vector<uint32_t> indices = all_indices(16);  // one contiguous block...
  for (uint32_t i = 17; i < n; i += 3) indices.push_back(i);  // ...and scattered entries
  for (int s = 1; s <= 100; ++s) {
    const bool touch = s == 1 || s == 2 || s == 100;
    const std::vector<uint32_t> used = touch ? indices : std::vector<uint32_t>{};
    const std::vector<float> values = values_at(random_normal(n, rng), used);
    sgd->step(ours, SparseGrad{used, values}, *state);
    ref.step(expected, used, values);
  }
  EXPECT_LE(relative_difference(ours, expected), kTolerance);
  const auto& buffer = dynamic_cast<const SgdState&>(*state).momentum_buffer;
  EXPECT_EQ(std::vector<float>(buffer.begin(), buffer.end()), ref.buf);
}

TEST_P(OptimExec, EmptyStepChangesNothingButTheCounter) {
  auto adam = make_sparse_adam({}, exec());
  auto state = adam->make_state(5, "empty");
  std::vector<float> p{1, 2, 3, 4, 5};
  adam->step(p, SparseGrad{}, *state);
  EXPECT_EQ(p, (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(state->step, 1u);
  const auto& s = dynamic_cast<const AdamState&>(*state);
  EXPECT_EQ(std::vector<uint32_t>(s.last_step.begin(), s.last_step.end()), std::vector<uint32_t>(5, 0));
}

TEST_P(OptimExec, SingleEntryTensor) {
  SgdOptions o{0.05, 0.9, 0.0, true, 1e-4};
  ReferenceSgd ref{o, {0.0f}, {0}};
  auto sgd = make_sparse_sgd(o, exec());
  auto state = sgd->make_state(1, "n1");
  std::vector<float> p{0.25f}, expected{0.25f};
  const std::vector<uint32_t> idx{0};
  for (int s = 0; s < 10; ++s) {
    const std::vector<float> g{static_cast<float>(s) - 4.5f};
    const std::vector<uint32_t>& used = s % 3 == 1 ? std::vector<uint32_t>{} : idx;
    const std::vector<float> values = s % 3 == 1 ? std::vector<float>{} : g;
    sgd->step(p, SparseGrad{used, values}, *state);
    ref.step(expected, used, values);
  }
  EXPECT_EQ(p, expected);
}

// --- validation: nothing may change when a step is rejected ---------------

struct Snapshot {
  std::vector<float> param, buffer;
  std::vector<uint32_t> last;
  uint32_t step;
};

Snapshot snapshot(const std::vector<float>& p, const ParamState& state) {
  const auto& s = dynamic_cast<const SgdState&>(state);
  return Snapshot{p, {s.momentum_buffer.begin(), s.momentum_buffer.end()}, {s.last_step.begin(), s.last_step.end()},
                  s.step};
}

void expect_rejected(SparseOptimizer& sgd, std::vector<float>& p, SparseGrad grad, ParamState& state,
                     const std::string& expected_text) {
  const Snapshot before = snapshot(p, state);
  try {
    sgd.step(p, grad, state);
    ADD_FAILURE() << "step was accepted, expected: " << expected_text;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'emb.weight'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(expected_text), std::string::npos) << e.what();
  }
  const Snapshot after = snapshot(p, state);
  EXPECT_EQ(after.param, before.param);
  EXPECT_EQ(after.buffer, before.buffer);
  EXPECT_EQ(after.last, before.last);
  EXPECT_EQ(after.step, before.step);
}

TEST(SparseOptimizerValidation, RejectsBadStepsWithoutSideEffects) {
  auto sgd = make_sparse_sgd({0.1, 0.9, 0.0, false, 0.0}, ExecutionOptions{simd::Level::kPortable, 1, 8});
  auto state = sgd->make_state(10, "emb.weight");
  std::vector<float> p(10, 1.0f);
  const std::vector<uint32_t> warm_idx{1, 2};
  const std::vector<float> warm_val{0.5f, -0.5f};
  sgd->step(p, SparseGrad{warm_idx, warm_val}, *state);  // non-trivial state to protect

  const std::vector<float> three{1.0f, 2.0f, 3.0f};
  const std::vector<uint32_t> out_of_range{0, 4, 10};
  expect_rejected(*sgd, p, SparseGrad{out_of_range, three}, *state, "position 2 is out of range");
  const std::vector<uint32_t> repeated{0, 4, 4};
  expect_rejected(*sgd, p, SparseGrad{repeated, three}, *state, "position 2 is not greater");
  const std::vector<uint32_t> decreasing{5, 3, 7};
  expect_rejected(*sgd, p, SparseGrad{decreasing, three}, *state, "position 1 is not greater");
  const std::vector<uint32_t> two{0, 1};
  expect_rejected(*sgd, p, SparseGrad{two, three}, *state, "2 indices but 3 values");
  std::vector<float> wrong_size(9, 1.0f);
  const Snapshot before = snapshot(p, *state);
  EXPECT_THROW(sgd->step(wrong_size, SparseGrad{}, *state), std::invalid_argument);
  EXPECT_EQ(snapshot(p, *state).step, before.step);
}

TEST(SparseOptimizerValidation, RejectsForeignStateAndBadOptions) {
  auto sgd = make_sparse_sgd({0.1, 0.9, 0.0, false, 0.0}, ExecutionOptions{simd::Level::kPortable, 1, 8});
  auto adam = make_sparse_adam({}, ExecutionOptions{simd::Level::kPortable, 1, 8});
  auto adam_state = adam->make_state(4, "w");
  std::vector<float> p(4, 0.0f);
  EXPECT_THROW(sgd->step(p, SparseGrad{}, *adam_state), std::invalid_argument);
  auto plain_state = make_sparse_sgd({0.1, 0.0, 0.0, false, 0.0})->make_state(4, "w");
  EXPECT_THROW(sgd->step(p, SparseGrad{}, *plain_state), std::invalid_argument);  // no momentum buffer

  EXPECT_THROW(make_sparse_sgd({0.1, 0.9, 0.1, true, 0.0}), std::invalid_argument);
  EXPECT_THROW(make_sparse_sgd({-0.1, 0.0, 0.0, false, 0.0}), std::invalid_argument);
  EXPECT_THROW(make_sparse_adam({1e-3, 1.0, 0.999, 1e-8, 0.0}), std::invalid_argument);
  EXPECT_THROW(make_sparse_adam({}, ExecutionOptions{simd::Level::kPortable, 0, 8}), std::invalid_argument);
}

// --- bitwise independence from thread count and SIMD level -----------------

struct Outcome {
  std::vector<float> param;
  std::vector<float> first, second;  // momentum buffer or exp_avg / exp_avg_sq
  std::vector<uint32_t> last;
};

Outcome run_lazy(bool adam, const ExecutionOptions& exec) {
  const std::size_t n = 20000;
  auto opt = adam ? make_sparse_adam({1e-2, 0.9, 0.99, 1e-8, 1e-4}, exec)
                  : make_sparse_sgd({0.05, 0.9, 0.1, false, 1e-4}, exec);
  auto state = opt->make_state(n, "t");
  std::mt19937 rng(5);
  Outcome out{random_normal(n, rng), {}, {}, {}};
  for (int s = 0; s < 70; ++s) {
    const std::vector<uint32_t> indices = random_indices(n, s == 0 || s == 69 ? 0.5 : 0.05, rng);
    const std::vector<float> values = values_at(random_normal(n, rng), indices);
    opt->step(out.param, SparseGrad{indices, values}, *state);
  }
  if (adam) {
    const auto& s = dynamic_cast<const AdamState&>(*state);
    out.first.assign(s.exp_avg.begin(), s.exp_avg.end());
    out.second.assign(s.exp_avg_sq.begin(), s.exp_avg_sq.end());
    out.last.assign(s.last_step.begin(), s.last_step.end());
  } else {
    const auto& s = dynamic_cast<const SgdState&>(*state);
    out.first.assign(s.momentum_buffer.begin(), s.momentum_buffer.end());
    out.last.assign(s.last_step.begin(), s.last_step.end());
  }
  return out;
}

void expect_bitwise_equal(const Outcome& a, const Outcome& b) {
  EXPECT_EQ(a.param, b.param);
  EXPECT_EQ(a.first, b.first);
  EXPECT_EQ(a.second, b.second);
  EXPECT_EQ(a.last, b.last);
}

TEST(SparseOptimizerDeterminism, ThreadCountDoesNotChangeResults) {
  for (const bool adam : {false, true}) {
    const Outcome one = run_lazy(adam, ExecutionOptions{simd::default_level(), 1, 1});
    expect_bitwise_equal(one, run_lazy(adam, ExecutionOptions{simd::default_level(), 2, 1}));
    expect_bitwise_equal(one, run_lazy(adam, ExecutionOptions{simd::default_level(), 3, 1}));
  }
}

TEST(SparseOptimizerDeterminism, PortableAndAvx2AgreeBitwise) {
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU lacks AVX2/FMA/F16C, so the AVX2 kernels cannot run";
  for (const bool adam : {false, true}) {
    expect_bitwise_equal(run_lazy(adam, ExecutionOptions{simd::Level::kPortable, 1, 1}),
                         run_lazy(adam, ExecutionOptions{simd::Level::kAvx2, 1, 1}));
  }
}

}  // namespace
}  // namespace st::optim
