// core/control/bandwidth_estimator: how the measured rate treats the
// nodes' phase. An exchange ends when every peer's part has arrived, so
// the node that posts first waits for its peer and the one that posts
// second may find its peer's bytes already there. Each option is shown
// on a case worked by hand: a late peer's wait kept out of the transfer
// time (skip_peer_lag), samples whose bytes arrived before their exchange
// left out (skip_early_arrivals), and the nodes' samples of an iteration
// timed together (pair_by_iteration). Part of control_test
// (tests/CMakeLists.txt). Pure logic.
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/control/bandwidth_estimator.h"
#include "tests/bandwidth_estimator_test_util.h"

namespace st {
namespace {

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

}  // namespace
}  // namespace st
