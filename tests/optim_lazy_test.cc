// Exact lazy momentum and extrapolate() (docs/optim.md, "Lazy momentum"):
// sparse SGD with LazyMomentum::kExact equals dense SGD with momentum fed
// the same sparse gradients (zeros elsewhere) at every touched entry, and
// extrapolate() shows a reader the dense parameters everywhere, plus any
// number of predicted zero-gradient steps. The decay rule's extrapolation
// is checked against its closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/optim/sparse_optimizer.h"
#include "tests/optim_test_util.h"

namespace st::optim {
namespace {

// Dense SGD with momentum, torch's update (buffer cloned from the first
// gradient, which is the zero vector for entries whose gradient is 0 at
// step 1: the same state as "never touched"), one step at a time.
struct DenseMomentumSgd {
  SgdOptions o;
  std::vector<float> buf;
  bool started = false;

  void step(std::vector<float>& p, const std::vector<float>& g) {
    const float m = static_cast<float>(o.momentum), neg_lr = static_cast<float>(-o.lr);
    for (std::size_t i = 0; i < p.size(); ++i) {
      buf[i] = started ? m * buf[i] + g[i] : g[i];
      const float d = o.nesterov ? g[i] + m * buf[i] : buf[i];
      p[i] = p[i] + neg_lr * d;
    }
    started = true;
  }
};

std::vector<float> scatter(std::size_t n, const std::vector<uint32_t>& indices, const std::vector<float>& values) {
  std::vector<float> dense(n, 0.0f);
  for (std::size_t j = 0; j < indices.size(); ++j) dense[indices[j]] = values[j];
  return dense;
}

// max |a_i - b_i| over `indices` relative to max |b|.
double relative_difference_at(const std::vector<float>& a, const std::vector<float>& b,
                              const std::vector<uint32_t>& indices) {
  double worst = 0, scale = 0;
  for (float x : b) scale = std::max(scale, std::abs(static_cast<double>(x)));
  for (uint32_t i : indices) worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
  return scale == 0 ? worst : worst / scale;
}

std::vector<float> extrapolated(const SparseOptimizer& sgd, const std::vector<float>& p, const ParamState& state,
                                uint32_t ahead) {
  std::vector<float> out(p.size());
  sgd.extrapolate(p, state, ahead, out);
  return out;
}

// Randomized sparse patterns (blocks and scattered entries, densities from
// 1% to 60%, some steps empty), plain and Nesterov momentum.
TEST_P(OptimExec, ExactLazyMomentumEqualsDenseMomentum) {
  for (const bool nesterov : {false, true}) {
    SCOPED_TRACE(nesterov ? "nesterov" : "plain momentum");
    SgdOptions o{0.05, 0.9, 0.0, nesterov, 0.0, LazyMomentum::kExact};
    constexpr std::size_t n = 1003;
    auto sgd = make_sparse_sgd(o, exec());
    auto state = sgd->make_state(n, "w");
    std::mt19937 rng(nesterov ? 21 : 20);
    std::vector<float> ours = random_normal(n, rng), dense = ours;
    DenseMomentumSgd reference{o, std::vector<float>(n, 0.0f)};
    std::uniform_real_distribution<double> density(0.01, 0.6);
    double worst_touched = 0, worst_view = 0;
    for (int s = 1; s <= 80; ++s) {
      const auto indices = s % 7 == 3 ? std::vector<uint32_t>{} : random_indices(n, density(rng), rng);
      const auto values = values_at(random_normal(n, rng), indices);
      sgd->step(ours, SparseGrad{indices, values}, *state);
      reference.step(dense, scatter(n, indices, values));
      worst_touched = std::max(worst_touched, relative_difference_at(ours, dense, indices));
      worst_view = std::max(worst_view, relative_difference(extrapolated(*sgd, ours, *state, 0), dense));
    }
    // Float rounding: the closed-form catch-up rounds once where dense SGD
    // rounds at every step.
    EXPECT_LE(worst_touched, kTolerance);
    EXPECT_LE(worst_view, kTolerance);
    // Predicting a steps ahead = dense SGD after a more zero-gradient steps.
    for (uint32_t ahead : {1u, 3u, 70u}) {
      std::vector<float> future = dense;
      DenseMomentumSgd copy = reference;
      for (uint32_t a = 0; a < ahead; ++a) copy.step(future, std::vector<float>(n, 0.0f));
      EXPECT_LE(relative_difference(extrapolated(*sgd, ours, *state, ahead), future), kTolerance) << ahead;
    }
  }
}

// Gaps beyond the 64-entry power-sum table take the closed form.
TEST_P(OptimExec, ExactLazyMomentumLongGaps) {
  SgdOptions o{0.05, 0.95, 0.0, false, 0.0, LazyMomentum::kExact};
  constexpr std::size_t n = 64;
  auto sgd = make_sparse_sgd(o, exec());
  auto state = sgd->make_state(n, "gaps");
  std::mt19937 rng(5);
  std::vector<float> ours = random_normal(n, rng), dense = ours;
  DenseMomentumSgd reference{o, std::vector<float>(n, 0.0f)};
  std::vector<uint32_t> indices = all_indices(16);
  for (uint32_t i = 17; i < n; i += 3) indices.push_back(i);
  for (int s = 1; s <= 150; ++s) {
    const bool touch = s == 1 || s == 2 || s == 150;
    const std::vector<uint32_t> used = touch ? indices : std::vector<uint32_t>{};
    const auto values = values_at(random_normal(n, rng), used);
    sgd->step(ours, SparseGrad{used, values}, *state);
    reference.step(dense, scatter(n, used, values));
  }
  EXPECT_LE(relative_difference_at(ours, dense, indices), kTolerance);
  EXPECT_LE(relative_difference(extrapolated(*sgd, ours, *state, 0), dense), kTolerance);
}

// At full density nothing is ever deferred: both rules give the same bits.
TEST_P(OptimExec, ExactAndDecayAgreeWhenDense) {
  constexpr std::size_t n = 1003;
  auto exact = make_sparse_sgd({0.05, 0.9, 0.0, false, 1e-4, LazyMomentum::kExact}, exec());
  auto decay = make_sparse_sgd({0.05, 0.9, 0.0, false, 1e-4, LazyMomentum::kDecay}, exec());
  auto exact_state = exact->make_state(n), decay_state = decay->make_state(n);
  std::mt19937 rng(3);
  std::vector<float> a = random_normal(n, rng), b = a;
  const auto indices = all_indices(n);
  for (int s = 0; s < 10; ++s) {
    const auto g = random_normal(n, rng);
    exact->step(a, SparseGrad{indices, g}, *exact_state);
    decay->step(b, SparseGrad{indices, g}, *decay_state);
  }
  EXPECT_EQ(a, b);
  EXPECT_EQ(extrapolated(*exact, a, *exact_state, 0), a);
}

// The paper's rule: no deferred movement, so ahead = 0 reads the stored
// values and ahead = a adds lr x buf x (m^(g+1) + ... + m^(g+a)) for an
// entry that missed g steps.
TEST_P(OptimExec, DecayRulePredictsFromTheDecayedBuffer) {
  const SgdOptions o{0.1, 0.9, 0.0, false, 0.0, LazyMomentum::kDecay};
  auto sgd = make_sparse_sgd(o, exec());
  auto state = sgd->make_state(3, "w");
  std::vector<float> p{1.0f, 2.0f, 3.0f};
  const std::vector<uint32_t> first{0, 1};
  const std::vector<float> g{1.0f, -2.0f};
  sgd->step(p, SparseGrad{first, g}, *state);                // buf = g at entries 0, 1
  const std::vector<uint32_t> second{1};
  const std::vector<float> g2{0.5f};
  sgd->step(p, SparseGrad{second, g2}, *state);             // entry 0 misses step 2
  EXPECT_EQ(extrapolated(*sgd, p, *state, 0), p);
  const auto ahead = extrapolated(*sgd, p, *state, 2);
  const auto& s = dynamic_cast<const SgdState&>(*state);
  const double m = 0.9;
  EXPECT_NEAR(ahead[0], p[0] - 0.1 * s.momentum_buffer[0] * (m * m + m * m * m), 1e-6);  // gap 1
  EXPECT_NEAR(ahead[1], p[1] - 0.1 * s.momentum_buffer[1] * (m + m * m), 1e-6);          // gap 0
  EXPECT_EQ(ahead[2], p[2]);                                                               // never touched
}

TEST(OptimLazy, ParsesAndNamesTheRules) {
  EXPECT_EQ(parse_lazy_momentum("exact"), LazyMomentum::kExact);
  EXPECT_EQ(parse_lazy_momentum("decay"), LazyMomentum::kDecay);
  EXPECT_STREQ(lazy_momentum_name(LazyMomentum::kExact), "exact");
  EXPECT_THROW(parse_lazy_momentum("dense"), std::invalid_argument);
}

TEST(OptimLazy, ExtrapolateChecksSizes) {
  auto sgd = make_sparse_sgd({0.1, 0.9});
  auto state = sgd->make_state(4, "w");
  std::vector<float> p(4), out(3);
  EXPECT_THROW(sgd->extrapolate(p, *state, 1, out), std::invalid_argument);
  auto adam = make_sparse_adam({});
  auto adam_state = adam->make_state(4, "w");
  std::vector<float> copy(4);
  p = {1, 2, 3, 4};
  adam->extrapolate(p, *adam_state, 1, copy);  // no momentum notion: a copy
  EXPECT_EQ(copy, p);
}

}  // namespace
}  // namespace st::optim
