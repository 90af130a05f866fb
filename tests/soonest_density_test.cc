// core/control/soonest_density.h and the controller's soonest-target rule
// (docs/control.md, "The soonest target"): the predicted iteration time,
// the density that minimises iteration time x iterations to the target,
// and the controller's use of it. Pure logic, part of control_test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/control/controller.h"
#include "core/control/soonest_density.h"
#include "tests/control_test_util.h"

namespace st {
namespace {

// The CNN's shape (two layers of 400k and 20k values), thresholdv16 blocks
// with f16 values, two nodes: about 2.25 bytes per value sent.
const control::TrafficModel kTraffic{{400000, 20000}, true, true, 2};

TEST(SoonestDensity, PredictsTheIterationFromComputeRoundTripAndTransfer) {
  const control::IterationPace pace{1.2, 20, 1};
  EXPECT_DOUBLE_EQ(control::predicted_iteration_ms(pace, 5), (1.2 + 20 + 5) / 2);  // the round trip paces
  EXPECT_DOUBLE_EQ(control::predicted_iteration_ms(pace, 30), 30);                 // the link paces
  EXPECT_DOUBLE_EQ(control::predicted_iteration_ms({150, 20, 1}, 5), 150);         // the compute paces
  EXPECT_DOUBLE_EQ(control::predicted_iteration_ms({1.2, 20, 0}, 5), 26.2);        // no overlap at staleness 0
  EXPECT_DOUBLE_EQ(control::iterations_factor(0.25, 0.3), 1.6);
}

// Where the round trip sets the pace (1.2 ms of compute, 20 ms one way),
// the choice is the grid's minimum of P x N: no density does better, it is
// inside the bounds, a larger sparsity_cost buys more density, and 0 (no
// cost to sparsity) takes the lower bound.
TEST(SoonestDensity, BalancesIterationTimeAgainstIterationsToTheTarget) {
  const control::IterationPace pace{1.2, 20, 1};
  double previous = 0;
  for (double k : {0.05, 0.1, 0.27}) {
    const auto c = control::soonest_density(kTraffic, 500, pace, k, 0.001, 0.5);
    EXPECT_FALSE(c.choice.at_lower_bound) << k;
    EXPECT_FALSE(c.choice.at_upper_bound) << k;
    EXPECT_NEAR(c.choice.budget_ms, kTraffic.bytes_per_iteration(c.choice.density) * 8 / 500e6 * 1e3, 1e-12);
    EXPECT_DOUBLE_EQ(c.iteration_ms, control::predicted_iteration_ms(pace, c.choice.budget_ms));
    for (double d = 0.001; d <= 0.5; d *= 1.001) {
      const double x = kTraffic.bytes_per_iteration(d) * 8 / 500e6 * 1e3;
      const double t = control::predicted_iteration_ms(pace, x) * control::iterations_factor(d, k);
      EXPECT_GE(t, c.relative_time * (1 - 0.01)) << "k " << k << " density " << d;  // within the grid's step
    }
    EXPECT_GT(c.choice.density, previous) << k;
    std::printf("k %.2f: density %.4f, iteration %.2f ms\n", k, c.choice.density, c.iteration_ms);
    previous = c.choice.density;
  }
  EXPECT_TRUE(control::soonest_density(kTraffic, 500, pace, 0, 0.001, 0.5).choice.at_lower_bound);
  // A slower link makes density dearer.
  EXPECT_LT(control::soonest_density(kTraffic, 100, pace, 0.27, 0.001, 0.5).choice.density,
            control::soonest_density(kTraffic, 500, pace, 0.27, 0.001, 0.5).choice.density);
}

// Where the compute sets the pace, every density whose exchange fits the
// compute window costs the same iteration time, so the rule takes at least
// the paper's density (the largest that fits C - E).
TEST(SoonestDensity, TakesAtLeastThePapersDensityWhereTheComputeSetsThePace) {
  const control::IterationPace pace{150, 20, 1};
  const auto paper = control::choose_density(kTraffic, 100, 150 - 20, 0.001, 0.5);
  const auto soonest = control::soonest_density(kTraffic, 100, pace, 0.27, 0.001, 0.5);
  EXPECT_GE(soonest.choice.density, paper.density * (1 - 0.025));  // the grid's step
  EXPECT_TRUE(control::soonest_density(kTraffic, 1e5, pace, 0.27, 0.001, 0.5).choice.at_upper_bound);
}

TEST(SoonestDensity, RejectsBadInput) {
  const control::IterationPace pace{1.2, 20, 1};
  EXPECT_THROW(control::soonest_density(kTraffic, 100, pace, -1, 0.001, 0.5), std::invalid_argument);
  EXPECT_THROW(control::soonest_density(kTraffic, 0, pace, 0.27, 0.001, 0.5), std::invalid_argument);
  EXPECT_THROW(control::soonest_density(kTraffic, 100, pace, 0.27, 0.5, 0.1), std::invalid_argument);
}

// A GPU 30x faster than sample_telemetry's: the round trip sets the pace.
telemetry::NodeTelemetry fast_gpu(int rank) {
  auto t = testing::sample_telemetry(rank);
  t.iteration = 20;
  t.backward_ms = 0.9;
  t.gpu_compute_ms = {1.2, 1.2};
  return t;
}

// The controller with sparsity_cost plans the rule's density and its
// transfer time, at the bandwidth scaled by the safety margin, and says so.
TEST(Controller, PlansTheSoonestTargetsDensity) {
  control::ControllerOptions o;
  o.estimator.initial_mbps = 100;
  o.sparsity_cost = 0.27;
  o.adapt_batch = false;
  control::Controller c(o, kTraffic, {{64, 64}, {64, 64}}, 0.05, 1);
  for (int r = 0; r < 2; ++r) c.on_telemetry(fast_gpu(r));
  const auto plan = c.tick(0.25, 20);
  ASSERT_TRUE(plan);
  const auto& rec = c.records().back();
  const auto expected = control::soonest_density(kTraffic, rec.estimated_mbps * o.safety,
                                                 {rec.compute_ms, rec.latency_ms, 1}, 0.27, o.min_density,
                                                 o.max_density);
  EXPECT_DOUBLE_EQ(plan->density, expected.choice.density);
  EXPECT_DOUBLE_EQ(rec.budget_ms, expected.choice.budget_ms);
  EXPECT_GT(plan->density, 0.05);
  EXPECT_NE(rec.reason.find("soonest target"), std::string::npos) << rec.reason;

  o.link_utilization = 0.2;  // two density rules
  EXPECT_THROW(control::validate(o), std::invalid_argument);
  o.link_utilization = 0;
  o.sparsity_cost = -1;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
}

}  // namespace
}  // namespace st
