// The backend-neutral network description (net/): config validation and
// sizing (plan_network, choose_mtu), the rate schedule and the link
// recorder. No backend is involved; builds without ns-3 and netlink.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "net/link_recorder.h"
#include "net/network_plan.h"
#include "net/rate_schedule.h"
#include "tests/net_test_util.h"

namespace st::net {
namespace {

traces::Trace steps_trace(std::vector<std::pair<double, double>> rows) {
  std::vector<traces::TraceStep> steps;
  for (const auto& [time, mbps] : rows) {
    traces::TraceStep step;
    step.time_s = time;
    step.mbps = mbps;
    steps.push_back(step);
  }
  return traces::Trace(std::move(steps), "test");
}

// Cluster a with 2 nodes, b with 1, a constant WAN both ways.
TopologyConfig two_clusters(double mbps = 115, double delay_ms = 20) {
  return testing::two_clusters(testing::constant_link(mbps, delay_ms), 2, 1);
}

// The message of the std::invalid_argument that plan_network throws.
std::string plan_error(const TopologyConfig& config) {
  try {
    plan_network(config);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(NetworkPlan, SizesFollowRateAndDelay) {
  const NetworkPlan plan = plan_network(two_clusters());
  ASSERT_EQ(plan.directions.size(), 2u);
  const WanDirectionPlan& ab = plan.directions[0];
  EXPECT_EQ(ab.name, "a->b");
  EXPECT_DOUBLE_EQ(ab.rtt_s, 2 * (0.020 + 2 * 0.00005));
  EXPECT_NEAR(ab.bdp_bytes, 115e6 / 8 * ab.rtt_s, 1e-6);
  EXPECT_NEAR(ab.buffer_bytes, ab.bdp_bytes, 1e-6);  // buffer_bdp 1
  // (BDP + buffer) = 1.16 MB is under 1000 packets of 1448 bytes: MTU 1500.
  EXPECT_TRUE(plan.mtu_automatic);
  EXPECT_EQ(plan.mtu, 1500);
  EXPECT_EQ(plan.segment_bytes, 1448);
  EXPECT_NEAR(plan.packets_in_flight, 2 * ab.bdp_bytes / 1448, 1e-9);
  EXPECT_EQ(plan.socket_buffer_bytes, 64u << 20);
}

TEST(NetworkPlan, AutomaticMtuKeepsPacketsInFlightNearTarget) {
  EXPECT_EQ(choose_mtu(1e6, 1000), 1500);
  EXPECT_EQ(choose_mtu(25e6, 1000), 25000 + 52);
  EXPECT_EQ(choose_mtu(1e9, 1000), 65535);
  TopologyConfig fast = two_clusters(1000, 50);  // BDP 12.5 MB, in flight 25 MB
  const NetworkPlan plan = plan_network(fast);
  EXPECT_LE(plan.packets_in_flight, 1000.0);
  EXPECT_GT(plan.packets_in_flight, 990.0);
  fast.mtu = 9000;
  EXPECT_EQ(plan_network(fast).mtu, 9000);
  EXPECT_FALSE(plan_network(fast).mtu_automatic);
  // Socket buffers grow past 64 MiB with 4 x BDP (10 Gbps, 100 ms: 125 MB).
  const NetworkPlan huge = plan_network(two_clusters(10000, 50));
  EXPECT_EQ(huge.mtu, 65535);
  EXPECT_NEAR(huge.socket_buffer_bytes, 4 * huge.directions[0].bdp_bytes, 1);
}

TEST(NetworkPlan, BufferBytesWinAndNeverGoBelowTwoPackets) {
  TopologyConfig config = two_clusters();
  config.wan[{0, 1}].buffer_bytes = 100;
  config.wan[{1, 0}].buffer_bdp = 2.5;
  config.mtu = 9000;
  const NetworkPlan plan = plan_network(config);
  EXPECT_EQ(plan.directions[0].buffer_bytes, 2 * 9000);
  EXPECT_NEAR(plan.directions[1].buffer_bytes, 2.5 * plan.directions[1].bdp_bytes, 1e-6);
}

TEST(NetworkPlan, TraceMaximumSetsTheSizes) {
  TopologyConfig config = two_clusters();
  config.wan[{0, 1}].trace = steps_trace({{0, 50}, {1, 300}, {2, 0}});
  const NetworkPlan plan = plan_network(config);
  EXPECT_EQ(plan.directions[0].max_mbps, 300);
}

TEST(NetworkPlan, BadConfigsNameTheProblem) {
  auto expect = [](const TopologyConfig& config, const std::string& text) {
    const std::string error = plan_error(config);
    EXPECT_NE(error.find(text), std::string::npos) << "got: " << error;
  };
  TopologyConfig config = two_clusters();
  config.wan.erase({0, 1});
  expect(config, "missing WAN direction 'a->b' (clusters 0 -> 1)");

  config = two_clusters();
  config.wan[{0, 1}].tcp = "reno2";
  expect(config, "tcp 'reno2': unknown congestion control (known: cubic, newreno");

  config = two_clusters();
  config.wan[{0, 1}].constant_mbps = 0;
  expect(config, "wan 'a->b': no trace and constant_mbps = 0");

  config = two_clusters();
  config.wan[{0, 1}].trace = steps_trace({{0, 0}, {1, 0}});
  expect(config, "never rises above 0 Mbps");

  config = two_clusters();
  config.clusters[1].name = "a";
  expect(config, "clusters[1].name 'a': used twice");

  config = two_clusters();
  config.clusters[0].name = "x,y";
  expect(config, "must not contain ','");

  config = two_clusters();
  config.clusters[0].nodes = 0;
  expect(config, "clusters[0] ('a').nodes = 0");

  config = two_clusters();
  config.mtu = 70000;
  expect(config, "mtu = 70000");

  config = two_clusters();
  config.wan[{2, 0}] = config.wan[{0, 1}];
  expect(config, "wan (2, 0): not a pair of distinct cluster indices");

  EXPECT_EQ(plan_error(TopologyConfig{}), "topology: clusters: at least one cluster is needed");
}

TEST(RateSchedule, MeansAreTimeWeightedAndLoop) {
  const RateSchedule schedule(steps_trace({{0, 10}, {1, 20}, {2, 30}}), 0);  // lasts 3 s
  EXPECT_DOUBLE_EQ(schedule.mean_mbps(0.5, 2.5), (0.5 * 10 + 20 + 0.5 * 30) / 2);
  EXPECT_DOUBLE_EQ(schedule.mean_mbps(2.5, 3.5), 20);  // 30 then, looping, 10
  EXPECT_DOUBLE_EQ(schedule.mean_mbps(300, 301), 10);
  RateSchedule::Segment segment = schedule.segment_at(2.9999);
  EXPECT_EQ(segment.index, 2u);
  segment = schedule.next(segment);
  EXPECT_EQ(segment.loop, 1u);
  EXPECT_EQ(segment.index, 0u);
  EXPECT_DOUBLE_EQ(segment.start_s, 3);
  EXPECT_DOUBLE_EQ(segment.end_s, 4);
  // 10^6 loops later the boundaries are still exact multiples.
  segment = schedule.segment_at(3e6 + 1.5);
  EXPECT_EQ(segment.loop, 1'000'000u);
  EXPECT_EQ(segment.index, 1u);
  EXPECT_DOUBLE_EQ(segment.start_s, 3e6 + 1);
}

TEST(RateSchedule, LateFirstRowHoldsFromZeroAndConstantNeverEnds) {
  const RateSchedule late(steps_trace({{2, 40}, {3, 80}}), 0);  // lasts 4 s
  EXPECT_DOUBLE_EQ(late.mean_mbps(0, 2), 40);
  EXPECT_DOUBLE_EQ(late.mean_mbps(0, 4), (3 * 40 + 80) / 4.0);
  const RateSchedule constant(traces::Trace(), 25);
  EXPECT_TRUE(constant.constant());
  EXPECT_DOUBLE_EQ(constant.mean_mbps(7, 9), 25);
  EXPECT_TRUE(std::isinf(constant.segment_at(1e9).end_s));
}

// A trace offset replays trace time t + offset at network time t; segments
// stay in network time (the first may have begun before 0).
TEST(RateSchedule, AnOffsetStartsTheReplayInsideTheTrace) {
  const auto trace = steps_trace({{0, 10}, {1, 20}, {2, 30}});  // lasts 3 s
  const RateSchedule from_zero(trace, 0), offset(trace, 0, 1.5);
  auto first = offset.segment_at(0);
  EXPECT_EQ(offset.step(first).mbps, 20);
  EXPECT_DOUBLE_EQ(first.start_s, -0.5);
  EXPECT_DOUBLE_EQ(first.end_s, 0.5);
  const auto second = offset.next(first);
  EXPECT_EQ(offset.step(second).mbps, 30);
  EXPECT_DOUBLE_EQ(second.start_s, 0.5);
  EXPECT_EQ(offset.step(offset.next(second)).mbps, 10) << "then the trace loops";
  EXPECT_DOUBLE_EQ(offset.mean_mbps(0, 1.5), from_zero.mean_mbps(1.5, 3.0));
  // Offset 0 is the plain replay, to the bit.
  const RateSchedule zero(trace, 0, 0.0);
  for (double t : {0.0, 0.999, 1.0, 2.5, 7.25}) {
    EXPECT_EQ(zero.segment_at(t).start_s, from_zero.segment_at(t).start_s);
    EXPECT_EQ(zero.segment_at(t).end_s, from_zero.segment_at(t).end_s);
  }
  EXPECT_THROW(RateSchedule(trace, 0, -1), std::invalid_argument);
}

TEST(LinkRecorder, RowsPerSecondAndTotals) {
  LinkRecorder recorder;
  const int link = recorder.add_link("a->b", RateSchedule(steps_trace({{0, 8}, {1, 16}}), 0));
  recorder.add_link("b->a", RateSchedule(traces::Trace(), 4));
  recorder.record_delivery(link, 0.2, 1000, 900);
  recorder.record_delivery(link, -1e-12, 500, 400);  // rounding before 0 counts in second 0
  recorder.record_delivery(link, 2.3, 2000, 1900);
  const std::vector<LinkSecond> rows = recorder.rows(2.5);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].delivered_bytes, 1500u);
  EXPECT_DOUBLE_EQ(rows[0].delivered_mbps, 1500 * 8 / 1e6);
  EXPECT_DOUBLE_EQ(rows[1].configured_mbps, 16);
  EXPECT_EQ(rows[2].second, 2);
  EXPECT_DOUBLE_EQ(rows[2].configured_mbps, 8);  // looped back to the first step
  EXPECT_DOUBLE_EQ(rows[2].delivered_mbps, 2000 * 8 / 1e6 / 0.5);  // a half second
  EXPECT_EQ(rows[3].link, "b->a");
  EXPECT_DOUBLE_EQ(rows[3].configured_mbps, 4);
  const std::string csv = recorder.csv(1);
  EXPECT_EQ(csv, std::string(LinkRecorder::kCsvHeader) + "\n0,a->b,8.000000,0.012000,1500\n" +
                     "0,b->a,4.000000,0.000000,0\n");
  const std::vector<LinkTotals> totals = recorder.totals();
  EXPECT_EQ(totals[0].wire_bytes, 3500u);
  EXPECT_EQ(totals[0].payload_bytes, 3200u);
  EXPECT_EQ(totals[0].packets, 3u);
}

TEST(LinkRecorder, IntervalsAreSpreadOverTheSecondsTheyOverlap) {
  LinkRecorder recorder;
  const int link = recorder.add_link("a->b", RateSchedule(traces::Trace(), 10));
  recorder.record_interval(link, 0.0, 0.1, 1000, 1);
  recorder.record_interval(link, 0.9, 1.3, 4001, 3);  // 1/4 in second 0, 3/4 in second 1
  recorder.record_interval(link, 1.3, 1.3, 7, 1);     // an empty interval counts where it is
  const std::vector<LinkSecond> rows = recorder.rows(2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].delivered_bytes, 1000u + 1000u);
  EXPECT_EQ(rows[1].delivered_bytes, 3001u + 7u);
  EXPECT_EQ(recorder.totals()[0].wire_bytes, 5008u);
  EXPECT_EQ(recorder.totals()[0].packets, 5u);
}

TEST(NetworkPlan, LongestOutageJoinsTheLoopBoundary) {
  WanDirection direction;
  direction.trace = steps_trace({{0, 0}, {1, 50}, {2, 0}, {5, 0}, {6, 20}, {7, 0}});  // lasts 8 s
  // 7-8 s at 0 joins 0-1 s of the next loop: 2 s; 2-6 s is the longest: 4 s.
  EXPECT_DOUBLE_EQ(longest_outage_s(direction), 4);
  direction.trace = steps_trace({{0, 10}});
  EXPECT_DOUBLE_EQ(longest_outage_s(direction), 0);
  direction.trace = traces::Trace();
  EXPECT_DOUBLE_EQ(longest_outage_s(direction), 0);
}

}  // namespace
}  // namespace st::net
