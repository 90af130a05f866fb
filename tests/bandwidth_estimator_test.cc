// core/control/bandwidth_estimator: the measured rate net of latency, the
// latency floor from probes and exchanges, probing and its ceiling, the
// decrease on an overrun (once per episode when asked, by a share of the
// waiting fraction when asked), resuming at the
// delivered rate after one, a late report's wait after it (fresh_overruns),
// and the wait the round trip explains. How the
// rate treats the nodes' phase is bandwidth_estimator_phase_test.cc's.
// Part of control_test (tests/CMakeLists.txt). Pure logic.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/control/bandwidth_estimator.h"
#include "tests/bandwidth_estimator_test_util.h"

namespace st {
namespace {

TEST(BandwidthEstimator, MeasuresTheRateNetOfLatency) {
  control::BandwidthEstimator e({/*initial_mbps=*/50});
  // 125 kB in 30 ms of busy time, 20 ms of it latency: 100 Mbps.
  for (int i = 0; i < 10; ++i) e.add(exchange(30, 125000));
  const auto r = e.update();
  ASSERT_TRUE(r.measured_mbps);
  EXPECT_NEAR(*r.measured_mbps, 100, 1e-9);
  EXPECT_NEAR(r.latency_ms, 20, 1e-12);
  EXPECT_EQ(r.reason, "measured");
  EXPECT_NEAR(r.mbps, 100, 1e-9);
}

// Layers leave backward one by one, so an iteration's exchanges need not
// overlap: a small layer's exchange (latency only) 15 ms before the big
// one's. The union is 45 ms, but the link carried the 125 kB for 10 ms only
// (the big exchange's 30 ms less its 20 ms latency): 100 Mbps, not 40.
TEST(BandwidthEstimator, TheFirstLatencyOfEveryExchangeCarriesNoBytes) {
  control::BandwidthEstimator e({50});
  for (int i = 0; i < 10; ++i) {
    auto s = exchange(45, 125000);
    s.intervals = {{0, 20}, {15, 45}};
    e.add(s);
  }
  const auto r = e.update();
  ASSERT_TRUE(r.measured_mbps);
  EXPECT_NEAR(*r.measured_mbps, 100, 1e-9);
}

TEST(BandwidthEstimator, TakesLatencyFromProbeRoundTrips) {
  control::BandwidthEstimator e({50});
  e.add_round_trip(60);  // queued behind data
  e.add_round_trip(40);
  // A skewed exchange that took no time at all would otherwise set L = 0.
  for (int i = 0; i < 10; ++i) e.add(exchange(30, 125000, 0, /*shortest_ms=*/0));
  const auto r = e.update();
  EXPECT_NEAR(r.latency_ms, 20, 1e-12);
  EXPECT_NEAR(*r.measured_mbps, 100, 1e-9);
}

// Ticks of tiny exchanges: the transfer part is too short to time; nobody
// waits. Each must be a probe without a measurement.
void probe_untimed_ticks(control::BandwidthEstimator& e, int ticks) {
  for (int tick = 0; tick < ticks; ++tick) {
    for (int i = 0; i < 10; ++i) e.add(exchange(20.1, 100));
    const auto r = e.update();
    EXPECT_FALSE(r.measured_mbps);
    EXPECT_EQ(r.reason, "probe");
  }
}

TEST(BandwidthEstimator, DoesNotCollapseWhenLittleIsSent) {
  control::BandwidthEstimator e({100});
  probe_untimed_ticks(e, 5);
  EXPECT_NEAR(e.mbps(), 100 * std::pow(1.1, 5), 1e-6);
}

// probe_growth: a tick where nothing could be timed doubles the estimate
// (a lower bound there); a tick that timed something still probes by growth.
TEST(BandwidthEstimator, ProbesFasterWhereNothingCouldBeTimed) {
  control::BandwidthEstimatorOptions o;
  o.initial_mbps = 10;
  o.probe_growth = 2;
  control::BandwidthEstimator e(o);
  probe_untimed_ticks(e, 5);
  EXPECT_NEAR(e.mbps(), 10 * std::pow(2, 5), 1e-9);
  // A timed 100 Mbps tick below the estimate: the 10% probe, capped at 4x it.
  for (int i = 0; i < 10; ++i) e.add(exchange(30, 125000));
  const auto timed = e.update();
  ASSERT_TRUE(timed.measured_mbps);
  EXPECT_EQ(timed.reason, "probe");
  EXPECT_NEAR(timed.mbps, 320 * 1.1, 1e-9);
  o.probe_growth = 0.5;
  EXPECT_THROW(control::BandwidthEstimator{o}, std::invalid_argument);
}

// slow_start_ticks: the first tick's overrun (the windows still opening)
// keeps the estimate; the next one shrinks it as always.
TEST(BandwidthEstimator, TheFirstTicksOverrunIsTheSlowStart) {
  control::BandwidthEstimatorOptions o;
  o.initial_mbps = 200;
  o.slow_start_ticks = 1;
  control::BandwidthEstimator e(o);
  for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, /*wait_ms=*/21));  // 100 Mbps, f = 0.5
  const auto first = e.update();
  EXPECT_EQ(first.reason, "slow start");
  EXPECT_NEAR(first.mbps, 200, 1e-9);
  for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, /*wait_ms=*/21));
  const auto second = e.update();
  EXPECT_EQ(second.reason, "overrun");
  EXPECT_NEAR(second.mbps, 50, 1e-9);
  o.slow_start_ticks = -1;
  EXPECT_THROW(control::BandwidthEstimator{o}, std::invalid_argument);
}

TEST(BandwidthEstimator, ShrinksByTheWaitingFraction) {
  control::BandwidthEstimator e({200});
  for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, /*wait_ms=*/21));  // 100 Mbps, f = 21 / (21 + 21) = 0.5
  const auto r = e.update();
  EXPECT_EQ(r.reason, "overrun");
  EXPECT_NEAR(r.wait_fraction, 0.5, 1e-12);
  EXPECT_NEAR(r.mbps, 50, 1e-9);
}

// decrease_once: of consecutive overrunning ticks (a queue draining) only
// the first shrinks the estimate; the next hold it at min(estimate, R), and
// a tick without an overrun ends the episode. Without it each one shrinks.
TEST(BandwidthEstimator, DecreasesOncePerOverrunWhenAsked) {
  for (bool once : {false, true}) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = 200;
    o.decrease_once = once;
    control::BandwidthEstimator e(o);
    std::vector<double> estimates;
    std::vector<std::string> reasons;
    auto tick = [&](double wait_ms) {
      for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, wait_ms));  // 100 Mbps; f = 0.5 at 21 ms
      const auto r = e.update();
      estimates.push_back(r.mbps);
      reasons.push_back(r.reason);
    };
    for (double wait_ms : {21.0, 21.0, 21.0, 0.0, 21.0}) tick(wait_ms);
    if (once) {
      EXPECT_EQ(reasons, (std::vector<std::string>{"overrun", "overrun, decreased already", "overrun, decreased already",
                                                   "measured", "overrun"}));
      EXPECT_NEAR(estimates[2], 50, 1e-9);
      EXPECT_NEAR(estimates[4], 50, 1e-9);  // 100 measured, then halved once more
    } else {
      EXPECT_EQ(reasons[1], "overrun");
      EXPECT_NEAR(estimates[2], 12.5, 1e-9);  // 200 x 0.5 x 0.5 x 0.5
    }
  }
}

// wait_decrease: an overrun takes that share of the waiting fraction off,
// so the queue drains over a few iterations instead of one. With decrease_once
// the episode's later ticks still take min(estimate, R), as at 1.
TEST(BandwidthEstimator, AnOverrunTakesTheAskedShareOfTheWaitingFraction) {
  for (double share : {1.0, 0.5, 0.25}) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = 200;
    o.decrease_once = true;
    o.wait_decrease = share;
    control::BandwidthEstimator e(o);
    for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, 21));  // R = 100 Mbps, f = 0.5
    const auto first = e.update();
    EXPECT_EQ(first.reason, "overrun");
    EXPECT_NEAR(first.mbps, 100 * (1 - share * 0.5), 1e-9) << share;
    for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, 21));
    const auto second = e.update();
    EXPECT_EQ(second.reason, "overrun, decreased already");
    EXPECT_NEAR(second.mbps, 100 * (1 - share * 0.5), 1e-9) << "min(estimate, R) holds it";
  }
  for (double bad : {0.0, -0.5, 1.5}) {
    control::BandwidthEstimatorOptions o;
    o.wait_decrease = bad;
    EXPECT_THROW(control::BandwidthEstimator{o}, std::invalid_argument) << bad;
  }
}

// drain_at_delivered: an episode's first tick cuts from R as before; its
// later ticks plan at least the rate the link delivered less the share to
// drain, up to the estimate that overran. Without it they hold the cut.
TEST(BandwidthEstimator, AnEpisodesLaterTicksDrainBelowTheDeliveredRate) {
  auto ticks = [](bool drain) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = 200;
    o.decrease_once = true;
    o.wait_decrease = 0.5;
    o.drain_at_delivered = drain;
    control::BandwidthEstimator e(o);
    std::vector<control::BandwidthEstimate> out;
    for (double delivered : {40.0, 160.0, 400.0, 50.0}) {
      for (int i = 0; i < 10; ++i) e.add(exchange(120, 1250000, 21));  // R = 100 Mbps, f = 0.5
      e.add_delivered(delivered);
      out.push_back(e.update());
    }
    return out;
  };
  const auto held = ticks(false);
  for (const auto& t : held) EXPECT_NEAR(t.mbps, 75, 1e-9) << "100 x (1 - 0.5 x 0.5), then min(estimate, R)";
  const auto drained = ticks(true);
  EXPECT_EQ(drained[0].reason, "overrun");
  EXPECT_NEAR(drained[0].mbps, 75, 1e-9) << "the first tick cuts from R, whatever was delivered";
  EXPECT_EQ(drained[1].reason, "overrun, decreased already; draining below the delivered rate");
  EXPECT_NEAR(drained[1].mbps, 120, 1e-9) << "160 x (1 - 0.5 x 0.5)";
  EXPECT_NEAR(drained[2].mbps, 200, 1e-9) << "400 x 0.75 = 300, no more than the estimate that overran";
  EXPECT_EQ(drained[3].reason, "overrun, decreased already");
  EXPECT_NEAR(drained[3].mbps, 100, 1e-9) << "50 x 0.75 is under min(estimate, R): that rule stands";
}

// probe_ceiling: probing stops at that multiple of the measured rate, and
// an estimate already above it is held, not lowered (only an overrun
// lowers it). The default, 4, lets a short-message measurement far under
// the link be probed past.
TEST(BandwidthEstimator, ProbesNoFurtherThanTheCeilingOverTheMeasuredRate) {
  auto estimates = [](double initial_mbps, double ceiling) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = initial_mbps;
    o.probe_ceiling = ceiling;
    control::BandwidthEstimator e(o);
    std::vector<double> out;
    for (int tick = 0; tick < 4; ++tick) {
      for (int i = 0; i < 10; ++i) e.add(exchange(120, 1000000));  // R = 80 Mbps, nobody waits
      out.push_back(e.update().mbps);
    }
    return out;
  };
  const auto wide = estimates(90, 4);
  EXPECT_NEAR(wide.back(), 90 * std::pow(1.1, 4), 1e-6);
  const auto near = estimates(90, 1.25);
  EXPECT_NEAR(near[0], 99, 1e-9);
  EXPECT_NEAR(near[1], 100, 1e-9);  // 1.25 x 80
  EXPECT_NEAR(near.back(), 100, 1e-9);
  const auto above = estimates(150, 1.25);
  EXPECT_NEAR(above.back(), 150, 1e-9);

  control::BandwidthEstimatorOptions bad;
  bad.probe_ceiling = 0.5;
  EXPECT_THROW(control::BandwidthEstimator{bad}, std::invalid_argument);
}

// resume_at_delivered: the first tick after an overrun episode resumes at
// the largest rate delivered while it lasted (the backlogged link's rate),
// at most at the estimate that overran; outside an episode the delivered
// rate is not read. Without it the estimate stays where the drain left it.
TEST(BandwidthEstimator, ResumesAtTheDeliveredRateAfterAnOverrunWhenAsked) {
  struct Tick {
    double wait_ms, bytes, delivered_mbps;
  };
  // 1.25 MB in 100 ms of transfer: R = 100 Mbps, and f = 0.5 at 21 ms of
  // wait. The quiet ticks send a tenth (R = 10 Mbps, too little to show
  // the link), and their delivered rate is what little they sent.
  const std::vector<Tick> ticks = {{0, 125000, 500}, {21, 1250000, 60}, {21, 1250000, 95},
                                   {0, 125000, 12},  {0, 125000, 10}};
  auto run = [&](double initial_mbps, bool resume) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = initial_mbps;
    o.decrease_once = true;
    o.resume_at_delivered = resume;
    control::BandwidthEstimator e(o);
    std::vector<control::BandwidthEstimate> out;
    for (const auto& t : ticks) {
      for (int i = 0; i < 10; ++i) e.add(exchange(120, t.bytes, t.wait_ms));
      e.add_delivered(t.delivered_mbps);
      out.push_back(e.update());
    }
    return out;
  };
  const auto off = run(200, false);
  const auto on = run(200, true);
  for (std::size_t i = 0; i < 3; ++i) {  // the same until the episode ends
    EXPECT_EQ(on[i].mbps, off[i].mbps);
    EXPECT_EQ(on[i].reason, off[i].reason);
  }
  EXPECT_EQ(on[0].reason, "probe");  // 500 delivered outside an episode: not read
  EXPECT_NEAR(on[2].mbps, 50, 1e-9);  // min(200, 100) x 0.5, then held through the drain
  EXPECT_NEAR(off[3].mbps, off[2].mbps, 1e-9);  // held: 4 x 10 Mbps caps the probe
  EXPECT_EQ(on[3].reason, "probe; resumed at the delivered rate");
  EXPECT_NEAR(on[3].mbps, 95, 1e-9);
  EXPECT_EQ(on[4].reason, "probe");  // once per episode
  EXPECT_NEAR(on[4].mbps, 95, 1e-9);

  // The estimate that overran caps the resumption.
  const auto capped = run(80, true);
  EXPECT_NEAR(capped[3].mbps, 80, 1e-9);
}

// With resume_at_delivered an episode also ends at a tick that still
// overran on the whole but whose newest iteration (every node's sample of
// it) waited no more than planned: the queue has drained by then.
TEST(BandwidthEstimator, AnEpisodeEndsOnceTheNewestIterationDoesNotWait) {
  control::BandwidthEstimatorOptions o;
  o.initial_mbps = 200;
  o.decrease_once = true;
  o.resume_at_delivered = true;
  auto tick = [](control::BandwidthEstimator& e, int first_iteration, std::vector<double> waits, double delivered) {
    for (std::size_t i = 0; i < waits.size(); ++i)
      for (int node = 0; node < 2; ++node) {
        auto s = exchange(120, 1250000, waits[i]);
        s.iteration = first_iteration + static_cast<int>(i);
        e.add(s);
      }
    e.add_delivered(delivered);
    return e.update();
  };
  control::BandwidthEstimator e(o);
  EXPECT_EQ(tick(e, 10, {21, 21}, 90).reason, "overrun");  // 200 -> 50
  // Iteration 13 still waited on one node: the episode goes on.
  control::BandwidthEstimator still(o);
  tick(still, 10, {21, 21}, 90);
  auto waiting = exchange(120, 1250000, 21);
  waiting.iteration = 13;
  still.add(waiting);
  EXPECT_EQ(tick(still, 12, {21, 0}, 90).reason, "overrun, decreased already");
  // Iteration 13 waited on neither node: the episode ends, on this tick.
  const auto drained = tick(e, 12, {21, 21, 21, 0}, 95);
  EXPECT_GT(drained.wait_fraction, o.wait_threshold);
  EXPECT_EQ(drained.reason,
            "overrun, decreased already; the newest iteration waited no more than planned; resumed at the delivered rate");
  EXPECT_NEAR(drained.mbps, 95, 1e-9);
  // A new episode decreases again.
  EXPECT_EQ(tick(e, 16, {21, 21}, 90).reason, "overrun");
}

// With fresh_overruns, once an episode has ended, a tick whose waits are
// older iterations' (the newest waited as planned) holds the estimate
// instead of starting a new episode; a tick whose newest iteration waited
// still does.
TEST(BandwidthEstimator, OlderIterationsWaitsStartNoNewEpisodeWhenAsked) {
  auto run = [](bool fresh) {
    control::BandwidthEstimatorOptions o;
    o.initial_mbps = 200;
    o.decrease_once = true;
    o.resume_at_delivered = true;
    o.fresh_overruns = fresh;
    control::BandwidthEstimator e(o);
    auto tick = [&e](int first_iteration, std::vector<double> waits) {
      for (std::size_t i = 0; i < waits.size(); ++i) {
        auto s = exchange(120, 1250000, waits[i]);
        s.iteration = first_iteration + static_cast<int>(i);
        e.add(s);
      }
      e.add_delivered(90);
      return e.update();
    };
    std::vector<control::BandwidthEstimate> ticks;
    ticks.push_back(tick(10, {21, 21}));  // 200 -> 50
    ticks.push_back(tick(12, {0, 0}));    // ends the episode: measures 100 Mbps
    ticks.push_back(tick(13, {21, 0}));   // iteration 13 reported late, 14 did not wait
    ticks.push_back(tick(15, {0, 21}));   // the newest waited
    return ticks;
  };
  const auto plain = run(false);
  EXPECT_EQ(plain[2].reason, "overrun");
  EXPECT_LT(plain[2].mbps, 100);
  const auto fresh = run(true);
  EXPECT_EQ(fresh[0].reason, "overrun");
  EXPECT_NEAR(fresh[1].mbps, 100, 1e-9);
  EXPECT_GT(fresh[2].wait_fraction, 0.02);
  EXPECT_EQ(fresh[2].reason, "older iterations waited, the newest did not; hold");
  EXPECT_NEAR(fresh[2].mbps, 100, 1e-9);
  EXPECT_EQ(fresh[3].reason, "overrun");
}

// A fast GPU behind a long round trip: 1.2 ms of compute, 20 ms one way,
// staleness 1. Every forward waits (20 - 1.2) / 2 = 9.4 ms at any density:
// that wait is the round trip's, and the estimate must not shrink for it.
TEST(BandwidthEstimator, TheWaitTheRoundTripExplainsIsNoOverrun) {
  control::ExchangePace pace;
  pace.compute_ms = 1.2;
  pace.staleness = 1;
  pace.latency_hops = 1;
  control::BandwidthEstimator planned({50});
  for (int i = 0; i < 10; ++i) planned.add(exchange(30, 125000, /*wait_ms=*/9.4));
  const auto r = planned.update(pace);
  EXPECT_NEAR(r.planned_wait_ms, 9.4, 1e-12);
  EXPECT_NEAR(r.wait_fraction, 0, 1e-12);
  EXPECT_EQ(r.reason, "measured");
  EXPECT_NEAR(r.mbps, 100, 1e-9);  // 125 kB in 10 ms net of latency

  // Iterations that take turns waiting about the planned wait (14 and
  // 4.8 ms) are no overrun either: the tick's wait is compared as a whole.
  control::BandwidthEstimator alternating({50});
  for (int i = 0; i < 10; ++i) alternating.add(exchange(30, 125000, i % 2 ? 14.0 : 4.8));
  EXPECT_EQ(alternating.update(pace).wait_fraction, 0);

  // Without the pace the same samples read as an overrun (the old rule).
  control::BandwidthEstimator unplanned({50});
  for (int i = 0; i < 10; ++i) unplanned.add(exchange(30, 125000, 9.4));
  EXPECT_EQ(unplanned.update().reason, "overrun");

  // A planned transfer time adds to the planned wait: budget 10 ms gives
  // (20 + 10 - 1.2) / 2 = 14.4 ms. Waiting 2 ms beyond that is an overrun
  // of 2 ms against a planned iteration of 1.2 + 14.4 ms: f = 2 / 17.6.
  pace.budget_ms = 10;
  control::BandwidthEstimator beyond({100});
  for (int i = 0; i < 10; ++i) beyond.add(exchange(30, 125000, 16.4));
  const auto b = beyond.update(pace);
  EXPECT_NEAR(b.planned_wait_ms, 14.4, 1e-12);
  EXPECT_EQ(b.reason, "overrun");
  EXPECT_NEAR(b.wait_fraction, 2.0 / (2 + 1.2 + 14.4), 1e-12);

  // Where the compute covers the exchange nothing is planned: the old rule.
  pace.compute_ms = 36;
  pace.budget_ms = 14.4;
  control::BandwidthEstimator covered({100});
  covered.add(exchange(30, 125000, 5));
  const auto c = covered.update(pace);
  EXPECT_EQ(c.planned_wait_ms, 0);
  EXPECT_NEAR(c.wait_fraction, 5.0 / (5 + 1.5 * 14), 1e-12);
}

TEST(BandwidthEstimator, JumpsToAFasterLinkAtOnce) {
  control::BandwidthEstimator e({50});
  for (int i = 0; i < 10; ++i) e.add(exchange(22, 125000));  // 500 Mbps in 2 ms
  EXPECT_NEAR(e.update().mbps, 500, 1e-6);
  EXPECT_THROW(control::BandwidthEstimator({0}), std::invalid_argument);
}

}  // namespace
}  // namespace st
