// Compressor behaviour: exactness of topk, reproducibility of randomk,
// count tracking of the threshold compressors, block selection of
// thresholdv16, mass conservation of error feedback, and identical results
// from the portable and AVX2 kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "compress_test_util.h"
#include "core/compress/compressor_names.h"
#include "core/compress/compressors.h"
#include "core/compress/kernels.h"

namespace st::compress {
namespace {

using testing::gaussian;
using testing::run;
using testing::simd_levels;
using testing::structured;

class PerSimd : public ::testing::TestWithParam<simd::Level> {};

TEST_P(PerSimd, TopkIsExactlyTheKLargest) {
  TopK topk(GetParam());
  for (std::size_t k : {1u, 17u, 1000u, 20000u}) {
    auto g = structured(100003, 7 + k);
    auto state = topk.make_state(g.size(), k, "w");
    // Two calls: the second uses the previous cutoff as its filter hint.
    for (int call = 0; call < 2; ++call) {
      for (auto& x : g) x *= 1.3f;
      const auto out = run(topk, *state, g, k);
      EXPECT_EQ(out.indices, testing::reference_topk(g, k)) << "k=" << k << " call " << call;
      for (std::size_t j = 0; j < out.indices.size(); ++j) ASSERT_EQ(out.values[j], g[out.indices[j]]);
    }
  }
}

TEST_P(PerSimd, TopkTiesGoToTheLowerIndex) {
  TopK topk(GetParam());
  // Quantised values: huge tie blocks at every magnitude.
  std::mt19937 rng(3);
  std::vector<float> g(50000);
  for (auto& x : g) x = static_cast<float>(static_cast<int>(rng() % 5) - 2);
  for (std::size_t k : {1u, 5000u, 19999u, 20000u, 20001u, 49999u}) {
    auto state = topk.make_state(g.size(), k, "q");
    EXPECT_EQ(run(topk, *state, g, k).indices, testing::reference_topk(g, k)) << "k=" << k;
  }
  // All magnitudes equal: the first k indices.
  std::vector<float> flat(40000, -0.5f);
  auto state = topk.make_state(flat.size(), 300, "flat");
  const auto out = run(topk, *state, flat, 300);
  ASSERT_EQ(out.indices.size(), 300u);
  EXPECT_EQ(out.indices.back(), 299u);
}

TEST_P(PerSimd, RandomkIsReproducibleFromItsSeedAndUniform) {
  const std::size_t n = 10000, k = 100;
  RandomK a(GetParam(), 42), b(GetParam(), 42), c(GetParam(), 43);
  auto sa = a.make_state(n, k, "x"), sb = b.make_state(n, k, "x"), sc = c.make_state(n, k, "x");
  const auto g = gaussian(n, 1);
  std::vector<int> hits(n, 0);
  bool differs_from_other_seed = false;
  for (int call = 0; call < 2000; ++call) {
    const auto oa = run(a, *sa, g, k);
    const auto ob = run(b, *sb, g, k);
    const auto oc = run(c, *sc, g, k);
    ASSERT_EQ(oa.indices, ob.indices) << "call " << call;
    differs_from_other_seed |= oa.indices != oc.indices;
    ASSERT_EQ(oa.indices.size(), k);
    testing::expect_strictly_increasing(oa.indices, n);
    for (std::size_t j = 0; j < k; ++j) ASSERT_EQ(oa.values[j], g[oa.indices[j]]);
    for (auto i : oa.indices) ++hits[i];
  }
  EXPECT_TRUE(differs_from_other_seed);
  // Each index is chosen with probability k/n per call: 20 expected hits.
  // Pool into 100 buckets of 100 indices (2000 expected each, sd ~44).
  for (std::size_t bucket = 0; bucket < 100; ++bucket) {
    const int sum = std::accumulate(hits.begin() + bucket * 100, hits.begin() + bucket * 100 + 100, 0);
    EXPECT_NEAR(sum, 2000, 250) << "bucket " << bucket;
  }
}

// The count the threshold alone selects stays within +-10% of k after a
// 5-step warm-up, on a gradient sequence whose scale drifts (growing 7% a
// step, with a +-30% oscillation). Like a real training run, consecutive
// gradients share structure: a fixed heavy-tailed part plus fresh noise of
// half its size every step.
void expect_count_tracks_k(Compressor& c, bool block_output) {
  const std::size_t n = 1 << 20;
  const auto base = structured(n, 99);
  for (double density : {0.01, 0.05}) {
    const std::size_t k = k_for_density(n, density);
    auto state = c.make_state(n, k, "drift");
    for (int step = 0; step < 20; ++step) {
      const float scale = std::pow(1.07f, step) * (1.0f + 0.3f * std::sin(0.9f * step));
      auto g = structured(n, 100 + step, 0.5f);
      for (std::size_t i = 0; i < n; ++i) g[i] = scale * (base[i] + g[i]);
      const auto out = run(c, *state, g, k);
      testing::expect_strictly_increasing(out.indices, n);
      if (block_output) {
        EXPECT_LE(out.indices.size(), k + 15);
        EXPECT_GE(out.indices.size() + 15, k);
      } else {
        EXPECT_LE(out.indices.size(), k);
      }
      if (step < 5) continue;
      const double ratio = static_cast<double>(state->last_threshold_count) / static_cast<double>(k);
      EXPECT_NEAR(ratio, 1.0, 0.10) << c.name() << " density " << density << " step " << step;
      if (!block_output) EXPECT_GE(static_cast<double>(out.indices.size()), 0.9 * static_cast<double>(k));
    }
  }
}

TEST_P(PerSimd, ThresholdvCountTracksKUnderScaleDrift) {
  ThresholdV c(GetParam());
  expect_count_tracks_k(c, false);
}

// Below about 0.2% density (and in tensors with k < 32) a threshold that
// kept too few must still come down: a gradient whose heavy tail thins by
// 3% a step against a steady bulk keeps thresholdv's count near k on
// average (a tensor of k = 18 moves by a few either way), where it used to
// fall by the drift's share every step.
TEST_P(PerSimd, ThresholdvCountRecoversBelowThePercent) {
  ThresholdV c(GetParam());
  for (const auto& [n, density] : {std::pair<std::size_t, double>{1 << 19, 0.001}, {1 << 19, 0.00195},
                                   {9408, 0.00195}}) {
    SCOPED_TRACE(::testing::Message() << "n " << n << " density " << density);
    const std::size_t k = k_for_density(n, density);
    auto state = c.make_state(n, k, "thinning");
    std::vector<double> counts;
    for (int step = 0; step < 20; ++step) {
      const float tail = std::pow(0.97f, static_cast<float>(step));
      auto g = structured(n, 200 + step, tail);
      const auto bulk = gaussian(n, 300 + step, 0.05f);
      for (std::size_t i = 0; i < n; ++i) g[i] += bulk[i];
      const auto out = run(c, *state, g, k);
      EXPECT_LE(out.indices.size(), k);
      if (step >= 5) counts.push_back(static_cast<double>(out.indices.size()) / static_cast<double>(k));
    }
    EXPECT_GE(std::accumulate(counts.begin(), counts.end(), 0.0) / static_cast<double>(counts.size()), 0.8);
    EXPECT_GE(*std::min_element(counts.begin(), counts.end()), 0.5);
  }
}

TEST_P(PerSimd, Thresholdv16CountTracksKUnderScaleDrift) {
  ThresholdV16 c(GetParam());
  expect_count_tracks_k(c, true);
}

// Reference: blocks ranked by (sum of |g| descending, block id ascending).
std::vector<uint32_t> reference_blocks(const std::vector<float>& g, std::size_t blocks) {
  std::vector<float> sums((g.size() + 15) / 16);
  portable::kKernels.block_abs_sums(g.data(), g.size(), sums.data());
  std::vector<uint32_t> ids(sums.size());
  std::iota(ids.begin(), ids.end(), 0u);
  std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return sums[a] > sums[b]; });
  ids.resize(blocks);
  std::sort(ids.begin(), ids.end());
  return ids;
}

TEST_P(PerSimd, Thresholdv16WritesTheBestWholeBlocks) {
  ThresholdV16 c(GetParam());
  const std::size_t n = 16 * 5000 + 7;  // a short tail block
  for (std::size_t k : {16u, 100u, 4000u}) {
    auto state = c.make_state(n, k, "blocks");
    for (int step = 0; step < 3; ++step) {
      auto g = structured(n, 900 + step);
      g[n - 1] = 1e6f;  // the tail block must be eligible
      const auto out = run(c, *state, g, k);
      std::vector<uint32_t> blocks;
      for (std::size_t j = 0; j < out.indices.size(); ++j) {
        if (out.indices[j] % 16 == 0) blocks.push_back(out.indices[j] / 16);
        ASSERT_EQ(out.indices[j], blocks.back() * 16 + (out.indices[j] % 16)) << "run broken at " << j;
        ASSERT_EQ(out.values[j], g[out.indices[j]]);
      }
      EXPECT_EQ(blocks, reference_blocks(g, (k + 15) / 16)) << "k=" << k << " step " << step;
      EXPECT_EQ(blocks.back(), (n - 1) / 16);
    }
  }
}

TEST_P(PerSimd, Thresholdv16HasNoFrontBias) {
  // Large values only in the back half: a scan that stopped once its output
  // was full would return front blocks.
  ThresholdV16 c(GetParam());
  const std::size_t n = 1 << 16, k = 1024;
  auto state = c.make_state(n, k, "back");
  for (int step = 0; step < 4; ++step) {
    auto g = gaussian(n, 50 + step, 1e-3f);
    const auto big = gaussian(n / 2, 70 + step, 1.0f);
    std::copy(big.begin(), big.end(), g.begin() + n / 2);
    // After step 0 the threshold was learnt on this shape; make the front
    // cross it too, at a lower level than the back.
    if (step == 3) for (std::size_t i = 0; i < n / 2; ++i) g[i] *= 500.0f;
    const auto out = run(c, *state, g, k);
    ASSERT_FALSE(out.indices.empty());
    EXPECT_GE(out.indices.front(), n / 2) << "step " << step;
  }
}

TEST_P(PerSimd, ErrorFeedbackConservesMass) {
  for (const auto& inner : base_compressor_names()) {
    auto c = make_compressor("ef:" + inner, {GetParam(), 5});
    const std::size_t n = 16 * 700 + 3, k = 300;
    auto state = c->make_state(n, k, "ef");
    std::vector<double> inputs(n, 0.0), sent(n, 0.0);
    for (int step = 0; step < 12; ++step) {
      const auto g = structured(n, 300 + step);
      for (std::size_t i = 0; i < n; ++i) inputs[i] += g[i];
      const auto out = run(*c, *state, g, k);
      for (std::size_t j = 0; j < out.indices.size(); ++j) sent[out.indices[j]] += out.values[j];
    }
    const auto r = ErrorFeedback::residual(*state);
    double worst = 0.0, scale = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      worst = std::max(worst, std::fabs(inputs[i] - (sent[i] + r[i])));
      scale = std::max(scale, std::fabs(inputs[i]));
    }
    EXPECT_LE(worst, 1e-5 * scale) << inner;
  }
}

// Momentum correction keeps a velocity u <- m u + g per tensor and hands u
// to the inner compressor; with masking the velocity of every entry sent is
// zeroed (DGC's momentum factor masking).
TEST(MomentumCorrection, CompressesTheVelocityAndMaskingZeroesWhatWasSent) {
  const std::size_t n = 1000, k = 50;
  const float m = 0.9f;
  for (const bool masking : {false, true}) {
    auto c = make_compressor(masking ? "mcm:topk" : "mc:topk", {simd::default_level(), 0, m});
    auto state = c->make_state(n, k, "mc");
    std::vector<float> velocity(n, 0.0f);
    for (int step = 0; step < 3; ++step) {
      const auto g = structured(n, 40 + step);
      for (std::size_t i = 0; i < n; ++i) velocity[i] = m * velocity[i] + g[i];
      const auto out = run(*c, *state, g, k);
      ASSERT_EQ(out.indices.size(), k) << "step " << step;
      for (std::size_t j = 0; j < k; ++j)
        EXPECT_FLOAT_EQ(out.values[j], velocity[out.indices[j]]) << "step " << step << ", entry " << j;
      if (masking)
        for (const auto i : out.indices) velocity[i] = 0.0f;
    }
    const auto kept = MomentumCorrection::velocity(*state);
    ASSERT_EQ(kept.size(), n);
    for (std::size_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(kept[i], velocity[i]) << "masking " << masking << ", " << i;
  }
}

// Local gradient clipping scales a tensor's gradient down to the largest
// norm before error feedback keeps it, and passes a smaller one unchanged:
// what is sent plus the residual is the clipped gradients' sum.
TEST(GradientClipping, ScalesALargeGradientToTheNormBeforeErrorFeedback) {
  const std::size_t n = 2000, k = 100;
  const auto g = structured(n, 11);
  double norm = 0.0;
  for (float v : g) norm += static_cast<double>(v) * v;
  norm = std::sqrt(norm);
  CompressorOptions options{simd::default_level(), 0};
  options.clip_norm = static_cast<float>(norm / 4);
  auto clipped = make_compressor("clip:ef:topk", options);
  EXPECT_EQ(clipped->name(), "clip:ef:topk");
  auto state = clipped->make_state(n, k, "clip");
  auto plain = make_compressor("ef:topk", options);
  auto plain_state = plain->make_state(n, k, "plain");

  // A gradient four times the norm: every value sent is a quarter of the unclipped one.
  const auto out = run(*clipped, *state, g, k);
  const auto reference = run(*plain, *plain_state, g, k);
  ASSERT_EQ(out.indices, reference.indices);
  for (std::size_t j = 0; j < k; ++j) EXPECT_NEAR(out.values[j], reference.values[j] / 4, 1e-6f * std::fabs(reference.values[j]));
  EXPECT_EQ(GradientClipping::counts(*state).clipped, 1u);
  EXPECT_NEAR(GradientClipping::counts(*state).largest_norm, norm, 1e-9 * norm);

  // A gradient under the norm passes unchanged.
  std::vector<float> small(g);
  for (float& v : small) v /= 8;
  const auto small_out = run(*clipped, *state, small, k);
  const auto counts = GradientClipping::counts(*state);
  EXPECT_EQ(counts.clipped, 1u);
  EXPECT_EQ(counts.seen, 2u);
  EXPECT_NEAR(counts.mean_norm, (norm + norm / 8) / 2, 1e-6 * norm);

  // Sent plus residual is the sum of what the decorator passed on.
  std::vector<double> sent(n, 0.0);
  for (const auto* o : {&out, &small_out})
    for (std::size_t j = 0; j < o->indices.size(); ++j) sent[o->indices[j]] += o->values[j];
  // The residual lives in the error feedback state inside the decorator:
  // rebuild it by running the same two steps through ef:topk on the clipped input.
  auto check = make_compressor("ef:topk", options);
  auto check_state = check->make_state(n, k, "check");
  std::vector<float> quarter(g);
  for (float& v : quarter) v /= 4;
  run(*check, *check_state, quarter, k);
  run(*check, *check_state, small, k);
  const auto r = ErrorFeedback::residual(*check_state);
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_NEAR(sent[i] + r[i], static_cast<double>(g[i]) / 4 + small[i], 1e-5) << i;
}

TEST(GradientClipping, ANormThatIsNotPositiveIsRefused) {
  for (float bad : {0.0f, -1.0f, std::numeric_limits<float>::quiet_NaN()}) {
    CompressorOptions options;
    options.clip_norm = bad;
    EXPECT_THROW(make_compressor("clip:ef:topk", options), std::invalid_argument) << bad;
  }
}

TEST(CompressSimd, PortableAndAvx2GiveIdenticalResults) {
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  auto names = base_compressor_names();
  names.push_back("ef:thresholdv16");
  for (const auto& name : names) {
    auto p = make_compressor(name, {simd::Level::kPortable, 9});
    auto a = make_compressor(name, {simd::Level::kAvx2, 9});
    const std::size_t n = 16 * 3001 + 9, k = 2000;
    auto sp = p->make_state(n, k, "t"), sa = a->make_state(n, k, "t");
    for (int step = 0; step < 6; ++step) {
      const auto g = structured(n, 500 + step, 1.0f + 0.1f * step);
      const auto op = run(*p, *sp, g, k);
      const auto oa = run(*a, *sa, g, k);
      EXPECT_EQ(op.indices, oa.indices) << name << " step " << step;
      EXPECT_EQ(op.values, oa.values) << name << " step " << step;
    }
  }
}

TEST(CompressKernels, PortableAndAvx2AgreeBitwise) {
  if (!simd::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2/FMA/F16C";
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 127u, 128u, 129u, 1000003u}) {
    const auto g = structured(n, n + 1);
    std::vector<float> sp((n + 15) / 16), sa((n + 15) / 16);
    const double tp = portable::kKernels.block_abs_sums(g.data(), n, sp.data());
    const double ta = avx2::kKernels.block_abs_sums(g.data(), n, sa.data());
    EXPECT_EQ(tp, ta) << n;
    EXPECT_EQ(sp, sa) << n;
    double exact = 0.0;
    for (float x : g) exact += std::fabs(x);
    EXPECT_NEAR(tp, exact, 1e-5 * exact + 1e-12) << n;
    std::vector<uint32_t> ip(n), ia(n);
    bool bp = true, ba = true;
    const auto cp = portable::kKernels.select_abs_ge(g.data(), n, 0.5f, ip.data(), n / 3, &bp);
    const auto ca = avx2::kKernels.select_abs_ge(g.data(), n, 0.5f, ia.data(), n / 3, &ba);
    EXPECT_EQ(cp, ca);
    EXPECT_EQ(ip, ia);
    EXPECT_FALSE(bp);
    EXPECT_FALSE(ba);
  }
  // Half conversions, including subnormals, rounding ties and overflow.
  std::vector<float> v = gaussian(4099, 11, 100.0f);
  for (float x : {0.0f, -0.0f, 5.96e-8f, 2.98e-8f, 6.1e-5f, 65504.0f, 65520.0f, 1e9f, 1.0009765625f,
                  1.00048828125f, 1.00146484375f})
    v.push_back(x);
  std::vector<uint16_t> hp(v.size()), ha(v.size());
  portable::kKernels.to_half(v.data(), hp.data(), v.size());
  avx2::kKernels.to_half(v.data(), ha.data(), v.size());
  EXPECT_EQ(hp, ha);
  std::vector<float> fp(v.size()), fa(v.size());
  portable::kKernels.from_half(hp.data(), fp.data(), v.size());
  avx2::kKernels.from_half(hp.data(), fa.data(), v.size());
  EXPECT_EQ(0, std::memcmp(fp.data(), fa.data(), fp.size() * 4));
}

INSTANTIATE_TEST_SUITE_P(Levels, PerSimd, ::testing::ValuesIn(simd_levels()),
                         [](const auto& info) { return std::string(simd::level_name(info.param)); });

}  // namespace
}  // namespace st::compress
