// core/control/bandwidth_estimator with samples_by_plan: each sample judged
// by the density its iteration ran at. A wait of an iteration that ran
// above the newest plan's density is not an overrun of that plan, and an
// iteration whose nodes ran at two densities stays out of the measured
// rate. Part of control_test (tests/CMakeLists.txt). Pure logic.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <vector>

#include "core/control/bandwidth_estimator.h"
#include "tests/bandwidth_estimator_test_util.h"

namespace st {
namespace {

// One node's iteration at `density`: 1.25 MB in 120 ms of busy time (100
// ms of transfer after the 20 ms latency: 100 Mbps), `wait_ms` of wait.
control::ExchangeSample ran_at(double density, int iteration, double wait_ms, int node = 0) {
  auto s = exchange(120, 1250000, wait_ms);
  s.iteration = iteration;
  s.node = node;
  s.density = density;
  return s;
}

control::ExchangePace newest_plan(double density) {
  control::ExchangePace pace;
  pace.density = density;
  return pace;
}

enum class Judge { newest_plan, newest_iteration, plan_it_ran_under };

control::BandwidthEstimator estimator(Judge judge, int nodes = 1) {
  control::BandwidthEstimatorOptions o;
  o.initial_mbps = 200;
  o.decrease_once = true;
  o.resume_at_delivered = true;
  o.fresh_overruns = judge == Judge::newest_iteration;
  o.samples_by_plan = judge == Judge::plan_it_ran_under;
  return control::BandwidthEstimator(o, nodes);
}

// One tick: the samples, then the update against a plan of `plan_density`
// (90 Mbps delivered meanwhile).
control::BandwidthEstimate tick(control::BandwidthEstimator& e, const std::vector<control::ExchangeSample>& samples,
                                double plan_density) {
  for (const auto& s : samples) e.add(s);
  e.add_delivered(90);
  return e.update(newest_plan(plan_density));
}

// Two nodes; a plan cut the density from 4% to 1% at the first tick
// (200 -> 50 Mbps), which each node took at its next iteration. The second
// tick ends the episode: rank 0's iteration 12 still ran at 4% and waited,
// its 13 ran at 1% and did not; it resumes at the 90 Mbps delivered. The
// third brings rank 1's report of iteration 13, which it ran at 4% and
// which waited behind the larger plan: the newest iteration of the tick,
// so judged against the newest plan or by the newest iteration it starts
// a new episode and cuts the estimate again. Judged by the plan it ran
// under it holds. A fourth tick whose 1% iterations wait is an overrun (a
// new episode where the third held).
std::vector<control::BandwidthEstimate> ticks_judged(Judge judge) {
  auto e = estimator(judge);
  std::vector<control::BandwidthEstimate> ticks;
  ticks.push_back(tick(e, {ran_at(0.04, 10, 21), ran_at(0.04, 11, 21)}, 0.04));
  ticks.push_back(tick(e, {ran_at(0.04, 12, 21), ran_at(0.01, 13, 0)}, 0.01));
  ticks.push_back(tick(e, {ran_at(0.04, 13, 21, 1)}, 0.01));
  ticks.push_back(tick(e, {ran_at(0.01, 14, 21), ran_at(0.01, 15, 21)}, 0.01));
  return ticks;
}

TEST(BandwidthEstimator, AWaitAboveTheNewestPlansDensityIsAnsweredWhenAsked) {
  for (const auto judge : {Judge::newest_plan, Judge::newest_iteration, Judge::plan_it_ran_under}) {
    const auto ticks = ticks_judged(judge);
    EXPECT_EQ(ticks[0].reason, "overrun");
    EXPECT_NEAR(ticks[0].mbps, 50, 1e-9);
    EXPECT_NEAR(ticks[1].mbps, 90, 1e-9);
    EXPECT_EQ(ticks[3].reason.rfind("overrun", 0), 0u) << ticks[3].reason;
  }
  EXPECT_EQ(ticks_judged(Judge::newest_plan)[2].reason, "overrun");
  EXPECT_EQ(ticks_judged(Judge::newest_iteration)[2].reason, "overrun");
  const auto by_plan = ticks_judged(Judge::plan_it_ran_under);
  // Only iteration 13 of rank 0 is judged at the second tick, and it did not wait.
  EXPECT_EQ(by_plan[1].wait_fraction, 0);
  EXPECT_EQ(by_plan[1].reason, "iterations above the newest plan's density waited; hold; resumed at the delivered rate");
  EXPECT_EQ(by_plan[2].wait_fraction, 0);
  EXPECT_EQ(by_plan[2].reason, "only iterations above the newest plan's density reported, and they waited; hold");
  EXPECT_NEAR(by_plan[2].mbps, 90, 1e-9);
  EXPECT_EQ(by_plan[3].reason, "overrun");  // a new episode
  EXPECT_LT(by_plan[3].mbps, 90);
}

// Until an iteration of the newest plan's density reports, the episode
// goes on: a tick of only the larger plan's waits holds without resuming,
// and the next tick whose smaller iterations still wait (its queue
// draining) is the same episode, not a new decrease.
TEST(BandwidthEstimator, AnEpisodeLastsUntilTheNewestPlansIterationsReport) {
  auto e = estimator(Judge::plan_it_ran_under);
  EXPECT_EQ(tick(e, {ran_at(0.04, 10, 21), ran_at(0.04, 11, 21)}, 0.04).reason, "overrun");  // 200 -> 50
  const auto held = tick(e, {ran_at(0.04, 12, 21)}, 0.01);
  EXPECT_EQ(held.reason, "only iterations above the newest plan's density reported, and they waited; hold");
  EXPECT_NEAR(held.mbps, 50, 1e-9);
  EXPECT_EQ(tick(e, {ran_at(0.01, 13, 21)}, 0.01).reason, "overrun, decreased already");
  EXPECT_EQ(tick(e, {ran_at(0.01, 14, 0)}, 0.01).reason, "measured");  // the episode ends: 100 Mbps measured
  EXPECT_EQ(tick(e, {ran_at(0.01, 15, 21)}, 0.01).reason, "overrun");  // a new one
}

// Iterations below the newest plan's density (the estimate has since
// grown) that waited are judged: the larger plan can only wait longer.
TEST(BandwidthEstimator, AWaitBelowTheNewestPlansDensityIsStillAnOverrun) {
  auto e = estimator(Judge::plan_it_ran_under);
  e.add(ran_at(0.01, 10, 21));
  e.add(ran_at(0.01, 11, 21));
  EXPECT_EQ(e.update(newest_plan(0.04)).reason, "overrun");
  // A pace that names no density judges every sample.
  auto unknown = estimator(Judge::plan_it_ran_under);
  unknown.add(ran_at(0.04, 10, 21));
  EXPECT_EQ(unknown.update().reason, "overrun");
}

// Two nodes, a plan taken at each node's next iteration: iteration 6 ran at
// 4% on rank 0 and 1% on rank 1, and its samples read 400 Mbps; the
// others read the link's 100. With the option, the mixed iteration stays
// out of the rate, paired or not.
TEST(BandwidthEstimator, AnIterationAtTwoDensitiesIsNotTimedWhenAsked) {
  auto mixed = [](int node) {
    auto s = ran_at(node == 0 ? 0.04 : 0.01, 6, 0, node);
    s.busy_ms = 45;  // 1.25 MB in 25 ms of transfer
    return s;
  };
  for (const bool pair : {false, true}) {
    auto rate = [&](bool by_plan) {
      auto o = control::BandwidthEstimatorOptions{};
      o.samples_by_plan = by_plan;
      o.pair_by_iteration = pair;
      control::BandwidthEstimator e(o, 2);
      for (int node = 0; node < 2; ++node) {
        e.add(ran_at(0.04, 5, 0, node));
        e.add(mixed(node));
        e.add(ran_at(0.01, 7, 0, node));
      }
      e.add_round_trip(40);
      return e.update(newest_plan(0.01)).measured_mbps;
    };
    SCOPED_TRACE(pair ? "paired" : "alone");
    EXPECT_NEAR(*rate(false), 6.0 * 1250000 * 8 / (4 * 100 + 2 * 25) / 1e3, 1e-9);
    EXPECT_NEAR(*rate(true), 100, 1e-9);
  }
}

TEST(BandwidthEstimator, SamplesByPlanReplacesFreshOverruns) {
  control::BandwidthEstimatorOptions o;
  o.samples_by_plan = true;
  o.fresh_overruns = true;
  EXPECT_THROW(control::BandwidthEstimator{o}, std::invalid_argument);
}

}  // namespace
}  // namespace st
