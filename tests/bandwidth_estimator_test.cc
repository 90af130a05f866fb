// core/control/bandwidth_estimator: the measured rate net of latency, the
// latency floor from probes and exchanges, probing and its ceiling, the
// decrease on an overrun (once per episode when asked), resuming at the
// delivered rate after one, a late peer's wait kept out of the transfer
// time (when asked), the nodes' samples of an iteration timed together
// (when asked), and the wait the round trip explains. Part of
// control_test (tests/CMakeLists.txt). Pure logic.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/control/bandwidth_estimator.h"

namespace st {
namespace {

control::ExchangeSample exchange(double busy_ms, double bytes, double wait_ms = 0, double shortest_ms = 20) {
  return {busy_ms, shortest_ms, bytes, wait_ms, 14};
}

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

// skip_peer_lag: rank 1 posts its part 280 ms after rank 0, so rank 0's
// exchanges stay open that much longer. Its quickest exchange (a tiny
// layer) takes the lag and the latency, 300 ms, while rank 1's complete as
// they are posted (rank 0's parts are there). Rank 0's nine 125 kB
// exchanges then arrive one after another at 100 Mbps, but R reads the
// 1.125 MB over the 370 ms the lag stretched them to, unless the option
// leaves out the lag.
control::ExchangeSample late_peer_exchanges(int iteration, double shortest_ms) {
  auto s = exchange(390, 1125000, 0, shortest_ms);
  s.intervals = {{0, 300}};
  for (int k = 1; k <= 9; ++k) s.intervals.push_back({0, 300 + 10 * k});
  s.iteration = iteration;
  return s;
}

// The rate one tick measures from `samples`, the probes reading a path of
// 20 ms one way.
std::optional<double> measured(const std::vector<control::ExchangeSample>& samples,
                               const control::BandwidthEstimatorOptions& options) {
  control::BandwidthEstimator e(options);
  for (const auto& s : samples) e.add(s);
  e.add_round_trip(40);
  return e.update().measured_mbps;
}

double measured_with(const std::vector<control::ExchangeSample>& samples, bool skip_peer_lag) {
  control::BandwidthEstimatorOptions o;
  o.skip_peer_lag = skip_peer_lag;
  return *measured(samples, o);
}

TEST(BandwidthEstimator, ALatePeersWaitIsNoTransferWhenAsked) {
  auto late_rank = exchange(0, 1125000, 0, /*shortest_ms=*/0);
  late_rank.intervals.assign(10, {0, 0});
  late_rank.iteration = 7;
  const std::vector<control::ExchangeSample> samples = {late_peer_exchanges(7, 300), late_rank};
  EXPECT_NEAR(measured_with(samples, false), 1125000 * 8 / 370e3, 1e-9);
  EXPECT_NEAR(measured_with(samples, true), 100, 1e-9);
}

// Where every node's quickest exchange took as long (a queue ahead of all
// of them, not a late peer), that time is transfer time with the option
// too; so is a node's whose iteration no other sample reports.
TEST(BandwidthEstimator, AQueueAheadOfEveryNodeIsTransferTime) {
  const double queued = 1125000 * 8 / 370e3;
  EXPECT_NEAR(measured_with({late_peer_exchanges(7, 300), late_peer_exchanges(7, 300)}, true), queued, 1e-9);
  EXPECT_NEAR(measured_with({late_peer_exchanges(7, 300)}, true), queued, 1e-9);
  EXPECT_NEAR(measured_with({late_peer_exchanges(-1, 300)}, true), queued, 1e-9);
}

// skip_early_arrivals: rank 1 posts its first four layers after rank 0's
// parts have arrived (they end as they begin) and its last 30 ms later,
// 20 of them latency. Its sample carries the iteration's 1.25 MB, but its
// transfer time is the last layer's 10 ms: R reads 1000 Mbps on a link of
// 100, which rank 0's sample (the 1.25 MB over 100 ms) shows. With the
// option the early sample is left out; a tick whose samples all arrived
// early measures nothing.
control::ExchangeSample iteration_with(std::vector<std::pair<double, double>> intervals) {
  auto s = exchange(intervals.back().second - intervals.front().first, 1250000);
  s.intervals = std::move(intervals);
  s.iteration = 3;
  return s;
}

std::optional<double> measured_early(const std::vector<control::ExchangeSample>& samples, bool skip) {
  control::BandwidthEstimatorOptions o;
  o.skip_early_arrivals = skip;
  return measured(samples, o);
}

TEST(BandwidthEstimator, BytesThatArrivedBeforeTheirExchangeAreNotTimedWhenAsked) {
  const auto early = iteration_with({{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 34}});
  const auto in_time = iteration_with({{0, 120}});
  EXPECT_NEAR(*measured_early({in_time, early}, false), 2500000 * 8 / 110e3, 1e-9);
  EXPECT_NEAR(*measured_early({early}, false), 1000, 1e-9);
  EXPECT_NEAR(*measured_early({in_time, early}, true), 100, 1e-9);
  EXPECT_FALSE(measured_early({early}, true).has_value());
  // An exchange of exactly the latency had its bytes in flight the whole time.
  EXPECT_NEAR(*measured_early({iteration_with({{0, 20}, {0, 120}})}, true), 100, 1e-9);
}

// pair_by_iteration: a 100 Mbps link, 20 ms one way; rank 1 posts 60 ms
// after rank 0, each receiving 1.25 MB (100 ms of transfer). Rank 0's
// exchange ends when rank 1's part has arrived, 180 ms after its own post:
// 160 ms of "transfer", 62.5 Mbps. Rank 1's ends 60 ms after its post, as
// rank 0's part was already 40 ms on its way: 250 Mbps. Either alone
// misreads the link by the lag; an iteration's two samples together read
// it (2.5 MB over 200 ms).
control::ExchangeSample posted(int rank, int iteration) {
  const double end_ms = rank == 0 ? 180 : 60;
  auto s = exchange(end_ms, 1250000);
  s.intervals = {{0, end_ms}};
  s.iteration = iteration;
  s.node = rank;
  return s;
}

// The rate of each tick, its samples given per tick.
std::vector<std::optional<double>> rates_per_tick(const std::vector<std::vector<control::ExchangeSample>>& ticks,
                                                  bool pair, int nodes = 2) {
  control::BandwidthEstimatorOptions o;
  o.pair_by_iteration = pair;
  control::BandwidthEstimator e(o, nodes);
  std::vector<std::optional<double>> rates;
  for (const auto& tick : ticks) {
    for (const auto& s : tick) e.add(s);
    e.add_round_trip(40);
    rates.push_back(e.update().measured_mbps);
  }
  return rates;
}

TEST(BandwidthEstimator, EachNodeAloneMisreadsTheLinkByItsLag) {
  const auto alone = rates_per_tick({{posted(0, 5)}, {posted(1, 5)}, {posted(0, 6), posted(1, 6)}}, false);
  EXPECT_NEAR(*alone[0], 62.5, 1e-9);
  EXPECT_NEAR(*alone[1], 250, 1e-9);
  EXPECT_NEAR(*alone[2], 100, 1e-9);  // a tick that holds both halves
}

// With the option, a sample waits for its iteration's other nodes, across
// ticks: the tick that holds only rank 1's half measures nothing, the next
// one the whole iteration.
TEST(BandwidthEstimator, AnIterationIsTimedOnceEveryNodeHasReportedItWhenAsked) {
  const auto paired = rates_per_tick({{posted(1, 5)}, {posted(0, 5), posted(1, 6)}, {posted(0, 6)}}, true);
  EXPECT_FALSE(paired[0].has_value());
  EXPECT_NEAR(*paired[1], 100, 1e-9);
  EXPECT_NEAR(*paired[2], 100, 1e-9);
  // Three nodes: two of them are not yet an iteration.
  auto third = posted(1, 5);
  third.node = 2;
  const auto three = rates_per_tick({{posted(0, 5), posted(1, 5)}, {third}}, true, 3);
  EXPECT_FALSE(three[0].has_value());
  EXPECT_NEAR(*three[1], 3 * 1250000 * 8 / (160 + 40 + 40) / 1e3, 1e-9);
  // A sample that names no node is timed alone, as without the option.
  auto unnamed = posted(1, 5);
  unnamed.node = -1;
  EXPECT_NEAR(*rates_per_tick({{unnamed}}, true)[0], 250, 1e-9);
}

// A half whose other half never comes (telemetry lost, the run ending) is
// dropped once the iterations have moved `pair_wait_iterations` (4) on, so
// a late partner then finds nothing to pair with.
TEST(BandwidthEstimator, AnIterationSomeNodeNeverReportsIsDropped) {
  std::vector<std::vector<control::ExchangeSample>> ticks = {{posted(1, 5)}};
  for (int i = 6; i <= 8; ++i) ticks.push_back({posted(0, i), posted(1, i)});
  ticks.push_back({posted(0, 5)});
  EXPECT_NEAR(*rates_per_tick(ticks, true).back(), 100, 1e-9);  // 5 is within 4 of 8: still held
  ticks.insert(ticks.end() - 1, std::vector<control::ExchangeSample>{posted(0, 9), posted(1, 9), posted(0, 10)});
  EXPECT_FALSE(rates_per_tick(ticks, true).back().has_value());
}

TEST(BandwidthEstimator, PairingReplacesTheOneSidedCorrections) {
  for (const bool peer_lag : {true, false}) {
    control::BandwidthEstimatorOptions o;
    o.pair_by_iteration = true;
    o.skip_peer_lag = peer_lag;
    o.skip_early_arrivals = !peer_lag;
    EXPECT_THROW(control::BandwidthEstimator{o}, std::invalid_argument);
  }
  EXPECT_THROW(control::BandwidthEstimator({}, 0), std::invalid_argument);
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
