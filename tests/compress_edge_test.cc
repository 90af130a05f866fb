// Edge cases every compressor must handle: tiny and odd sizes, k = 0 and
// k = n, all-zero gradients, NaN/Inf (a NonFiniteGradient error that leaves
// the state untouched) and bad arguments.
#include <cstring>
#include <limits>

#include "compress_test_util.h"
#include "core/compress/compressor_names.h"
#include "core/compress/compressors.h"

namespace st::compress {
namespace {

using testing::run;

struct Case {
  std::string name;
  simd::Level level;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  // Every base compressor (a new one is covered without an edit here) and
  // the decorators around two of them.
  std::vector<std::string> names = compress::base_compressor_names();
  names.insert(names.end(), {"ef:topk", "ef:thresholdv16", "clip:ef:thresholdv16"});
  for (auto level : testing::simd_levels())
    for (const auto& name : names) out.push_back({name, level});
  return out;
}

class Edge : public ::testing::TestWithParam<Case> {
 protected:
  std::unique_ptr<Compressor> make() {
    CompressorOptions options{GetParam().level, 1};
    options.clip_norm = 0.5f;  // under the structured gradients' norms: clip: scales them
    return make_compressor(GetParam().name, options);
  }
  bool is_block() const { return GetParam().name.find("thresholdv16") != std::string::npos; }
};

TEST_P(Edge, SizesAndKAtBothEnds) {
  auto c = make();
  for (std::size_t n : {1u, 15u, 16u, 16u * 9 + 7}) {
    for (std::size_t k : {std::size_t{0}, std::size_t{1}, n / 2, n}) {
      auto state = c->make_state(n, n, "e");
      for (int step = 0; step < 3; ++step) {
        const auto g = testing::structured(n, n * 31 + k + step);
        const auto out = run(*c, *state, g, k);
        testing::expect_strictly_increasing(out.indices, n);
        for (std::size_t j = 0; j < out.indices.size(); ++j) {
          if (GetParam().name.find("ef:") == std::string::npos) ASSERT_EQ(out.values[j], g[out.indices[j]]);
        }
        if (k == 0) EXPECT_TRUE(out.indices.empty()) << "n=" << n;
        if (k == n) EXPECT_EQ(out.indices.size(), n) << "n=" << n;
        if (is_block() && k > 0) EXPECT_GE(out.indices.size() + 15, k);
        EXPECT_LE(out.indices.size(), c->max_output(n, k));
      }
    }
  }
}

TEST_P(Edge, AllZeroGradient) {
  auto c = make();
  const std::size_t n = 16 * 40 + 7, k = 50;
  auto state = c->make_state(n, k, "zero");
  const std::vector<float> g(n, 0.0f);
  for (int step = 0; step < 3; ++step) {
    const auto out = run(*c, *state, g, k);
    testing::expect_strictly_increasing(out.indices, n);
    for (float v : out.values) EXPECT_EQ(v, 0.0f);
    // Deterministic ties: exact selectors take the lowest indices.
    if (GetParam().name == "topk" || is_block()) {
      ASSERT_FALSE(out.indices.empty());
      EXPECT_EQ(out.indices.front(), 0u);
    }
  }
}

TEST_P(Edge, NonFiniteGradientIsAClearErrorAndLosesNothing) {
  auto c = make();
  const std::size_t n = 16 * 30 + 5, k = 40;
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity()}) {
    for (std::size_t where : {std::size_t{0}, std::size_t{200}, n - 1}) {
      auto state = c->make_state(n, k, "layer3.weight");
      auto good = testing::structured(n, 77);
      const auto first = run(*c, *state, good, k);
      auto g = good;
      g[where] = bad;
      try {
        run(*c, *state, g, k);
        ADD_FAILURE() << "no error for " << bad << " at " << where;
      } catch (const NonFiniteGradient& e) {
        EXPECT_EQ(e.index(), where);
        EXPECT_NE(std::string(e.what()).find("layer3.weight"), std::string::npos) << e.what();
      }
      if (GetParam().name.find("ef:") != std::string::npos) {
        // The residual is what the first call left: nothing was added or lost.
        // Behind clip: it lives in the decorator's inner state.
        const bool clipped = GetParam().name.rfind("clip:", 0) == 0;
        auto residual_of = [clipped](const TensorState& s) {
          return ErrorFeedback::residual(clipped ? *static_cast<const DecoratedState&>(s).inner : s);
        };
        auto fresh = c->make_state(n, k, "layer3.weight");
        run(*c, *fresh, good, k);
        const auto r1 = residual_of(*state), r2 = residual_of(*fresh);
        EXPECT_EQ(0, std::memcmp(r1.data(), r2.data(), n * sizeof(float)));
        if (clipped) {
          // The failed call counted nothing, and the good one was clipped.
          EXPECT_EQ(GradientClipping::counts(*state).seen, 1u);
          EXPECT_EQ(GradientClipping::counts(*state).clipped, 1u);
        }
      }
      // The state still works.
      const auto after = run(*c, *state, good, k);
      EXPECT_FALSE(after.indices.empty());
    }
  }
}

TEST_P(Edge, BadArgumentsAreRejected) {
  auto c = make();
  auto state = c->make_state(100, 10, "arg");
  std::vector<float> g(100, 1.0f), wrong(99, 1.0f);
  std::vector<uint32_t> idx(64);
  std::vector<float> val(64);
  EXPECT_THROW(c->compress(Span<const float>(wrong), 10, *state, {idx.data(), val.data(), 64}), std::invalid_argument);
  EXPECT_THROW(c->compress(Span<const float>(g), 11, *state, {idx.data(), val.data(), 64}), std::invalid_argument);
  EXPECT_THROW(c->compress(Span<const float>(g), 10, *state, {idx.data(), val.data(), 5}), std::invalid_argument);
}

INSTANTIATE_TEST_SUITE_P(All, Edge, ::testing::ValuesIn(cases()), [](const auto& info) {
  std::string name = info.param.name + "_" + simd::level_name(info.param.level);
  for (auto& ch : name) if (ch == ':') ch = '_';
  return name;
});

TEST(CompressFactory, UnknownNameIsAnError) {
  try {
    make_compressor("top-k");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("top-k"), std::string::npos);
  }
  EXPECT_EQ(make_compressor("ef:thresholdv16")->name(), "ef:thresholdv16");
}

TEST(CompressDensity, KForDensity) {
  EXPECT_EQ(k_for_density(1000, 0.0), 0u);
  EXPECT_EQ(k_for_density(1000, 0.05), 50u);
  EXPECT_EQ(k_for_density(10, 0.001), 1u);
  EXPECT_EQ(k_for_density(10, 1.0), 10u);
  EXPECT_EQ(k_for_density(0, 0.5), 0u);
  EXPECT_THROW(k_for_density(10, 1.5), std::invalid_argument);
  EXPECT_THROW(k_for_density(10, -0.1), std::invalid_argument);
  EXPECT_THROW(k_for_density(10, std::nan("")), std::invalid_argument);
}

}  // namespace
}  // namespace st::compress
