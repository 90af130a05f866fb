// The sweep's grid (apps/sweep_grid.h): every combination, labels that name
// only the swept dimensions, which run is better, and the grid extended
// past its edge when the best learning rate or density lies on it.
#include <gtest/gtest.h>

#include "apps/sweep_grid.h"

namespace st::apps {
namespace {

TEST(SweepGrid, CombinationsAndLabels) {
  train::TrainConfig ddp;
  ddp.use_system("ddp");
  SweepGrid g;
  g.lrs = {0.05, 0.1};
  g.densities = {0.01};
  const auto settings = grid(g, ddp);
  EXPECT_EQ(settings.size(), 2u) << "ddp has no density to fix";
  EXPECT_EQ(setting_label("ddp", settings[1], g), "ddp.lr-0.1.as-is");
  train::TrainConfig st;
  EXPECT_EQ(grid(g, st).size(), 4u) << "stellatrain: as-is and one fixed density per lr";
}

TEST(SweepGrid, BetterReachesSoonerThenHigher) {
  const nlohmann::ordered_json fast = {{"tta_s", 5.0}, {"best_accuracy", 0.9}};
  const nlohmann::ordered_json slow = {{"tta_s", 9.0}, {"best_accuracy", 0.95}};
  const nlohmann::ordered_json never = {{"tta_s", nullptr}, {"best_accuracy", 0.99}};
  const nlohmann::ordered_json failed = {{"error", "x"}};
  EXPECT_TRUE(better(fast, slow));
  EXPECT_TRUE(better(slow, never));
  EXPECT_TRUE(better(never, failed));
  EXPECT_FALSE(better(failed, never));
}

TEST(SweepGrid, TheEdgeExtendsTheGrid) {
  const std::vector<Point> lrs = {{{0.025, 0.9, 0, 0}, "a"}, {{0.05, 0.9, 0, 0}, "b"}, {{0.1, 0.9, 0, 0}, "c"}};
  const auto up = beyond_the_edge(lrs, lrs[2]);
  ASSERT_EQ(up.size(), 1u);
  EXPECT_DOUBLE_EQ(up[0].lr, 0.2);
  const auto down = beyond_the_edge(lrs, lrs[0]);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_DOUBLE_EQ(down[0].lr, 0.0125);
  EXPECT_TRUE(beyond_the_edge(lrs, lrs[1]).empty()) << "an inner best is the answer";
  EXPECT_TRUE(beyond_the_edge({lrs[0]}, lrs[0]).empty()) << "one value has no edge to extend";
  const std::vector<Point> densities = {{{0.1, 0.9, 0, 0.5}, "x"}, {{0.1, 0.9, 0, 1.0}, "y"}};
  EXPECT_TRUE(beyond_the_edge(densities, densities[1]).empty()) << "a density cannot pass 1";
  const auto lower = beyond_the_edge(densities, densities[0]);
  ASSERT_EQ(lower.size(), 1u);
  EXPECT_DOUBLE_EQ(lower[0].density, 0.25);
}

}  // namespace
}  // namespace st::apps
