// Statistics over seeds (apps/seed_statistics.h) and the trace offset a
// seed gives its runs (apps/scenario.h): medians that treat a seed that
// never reached the target as the latest, paired speedups whose 95%
// interval comes from a deterministic bootstrap over seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "apps/scenario.h"
#include "apps/seed_statistics.h"

namespace st::apps {
namespace {

TEST(SeedStatistics, MediansOfReachedAndMissedSeeds) {
  EXPECT_FALSE(median({}));
  EXPECT_DOUBLE_EQ(*median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
  // A missed target sorts after every reached one.
  EXPECT_DOUBLE_EQ(*median_reached({5.0, std::nullopt, 1.0}), 5.0);
  EXPECT_DOUBLE_EQ(*median_reached({1.0, 2.0, 3.0, std::nullopt}), 2.5);
  EXPECT_FALSE(median_reached({1.0, std::nullopt}));
  EXPECT_FALSE(median_reached({1.0, 2.0, std::nullopt, std::nullopt}));
  EXPECT_FALSE(median_reached({}));
}

TEST(SeedStatistics, PairedSpeedupMedianAndInterval) {
  // ddp 20 s, the system 4, 5 and 10 s in the same seeds: speedups 5, 4, 2.
  const auto s = paired_speedup({20.0, 20.0, 20.0}, {4.0, 5.0, 10.0});
  EXPECT_EQ(s.pairs, 3);
  EXPECT_DOUBLE_EQ(*s.median, 4);
  ASSERT_TRUE(s.ci95);
  EXPECT_LE(s.ci95->first, *s.median);
  EXPECT_GE(s.ci95->second, *s.median);
  EXPECT_GE(s.ci95->first, 2);
  EXPECT_LE(s.ci95->second, 5);
  const auto again = paired_speedup({20.0, 20.0, 20.0}, {4.0, 5.0, 10.0});
  EXPECT_EQ(again.ci95, s.ci95) << "the bootstrap is deterministic";
  // Seeds where either side never reached the target are not pairs.
  const auto partial = paired_speedup({20.0, std::nullopt, 30.0}, {4.0, 5.0, std::nullopt});
  EXPECT_EQ(partial.pairs, 1);
  EXPECT_DOUBLE_EQ(*partial.median, 5);
  EXPECT_FALSE(partial.ci95) << "one pair has no interval";
  EXPECT_THROW(paired_speedup({1.0}, {1.0, 2.0}), std::invalid_argument);
}

Scenario load(const std::string& links) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "seed_offset.yaml";
  std::ofstream(path) << "clusters:\n  - {name: a}\n  - {name: b}\n" << links
                      << "model: mlp\ndataset: synthetic\nsystems: [ddp]\ntarget_accuracy: 0.5\n"
                         "budget: {iterations: 2}\n";
  return load_scenario(path.string());
}

TEST(SeedStatistics, ATraceOffsetPerSeedSharedByEverySystem) {
  const std::string trace = std::string(ST_SOURCE_DIR) + "/traces/fluct-115mbps.csv";
  const auto s = load("links:\n  wan:\n    default: {trace: " + trace + "}\n");
  EXPECT_FALSE(s.trace_offset_s) << "auto by default";
  const double one = s.trace_offset_for(1), two = s.trace_offset_for(2);
  EXPECT_EQ(one, s.trace_offset_for(1)) << "a seed always gives the same offset";
  EXPECT_NE(one, two);
  for (uint64_t seed = 1; seed < 50; ++seed) {
    const double offset = s.trace_offset_for(seed);
    EXPECT_GE(offset, 0);
    EXPECT_LT(offset, 1800) << "within the trace's loop";
    EXPECT_NEAR(offset * 1000, std::round(offset * 1000), 1e-6) << "whole milliseconds";
  }
  const auto fixed = load("links:\n  trace_offset: 12.5\n  wan:\n    default: {trace: " + trace + "}\n");
  EXPECT_EQ(fixed.trace_offset_for(1), 12.5);
  EXPECT_EQ(fixed.trace_offset_for(7), 12.5);
  const auto constant = load("links:\n  wan:\n    default: {mbps: 100}\n");
  EXPECT_EQ(constant.trace_offset_for(3), 0) << "nothing to offset";
  EXPECT_THROW(load("links:\n  trace_offset: -1\n  wan:\n    default: {mbps: 100}\n"), std::exception);
}

}  // namespace
}  // namespace st::apps
