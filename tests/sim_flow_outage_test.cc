// The flow-level network (sim/flow/flow_network.h) through link outages,
// beside ns-3's packets for the same network and traffic. What ns-3 does
// there (docs/sim-flow.md, "Outages"): the bytes waiting in the closed
// bottleneck leave when the outage ends and their ACKs restart the sender,
// unless bytes were lost (a window sent into the outage, or holes of a loss
// episode not yet repaired) and a second retransmission timeout fired, in
// which case it waits for the next backed-off retransmission. The printed
// ratios are quoted in docs/sim-flow.md.
#include <gtest/gtest.h>
#include <ns3/core-module.h>

#include <cstdio>
#include <string>
#include <vector>

#include "sim/sim_wan.h"
#include "tests/sim_network_test_util.h"

namespace st::sim {
namespace {

using comm::Message;
using namespace st::sim::testing;

class SimFlowOutageTest : public SimNetworkTest {};

struct Send {
  double at_s;
  int from;  // to the other node
  std::size_t bytes;
};

struct OutageCase {
  std::string name;
  double delay_ms;  // one way
  double start_s, end_s;
  std::vector<Send> sends;
  // The link's rates (each way) in place of 50 Mbps with 0 from `start_s`
  // to `end_s`, and its buffer in BDPs of the highest rate.
  std::vector<traces::TraceStep> steps = {};
  double buffer_bdp = 1;
};

// Each message's arrival time (-1: never) over a 50 Mbps link each way
// that carries nothing from `start_s` to `end_s` (or `steps`).
std::vector<double> arrivals(const OutageCase& c, net::NetworkModel model, int rto_min_ms) {
  const std::vector<traces::TraceStep> outage = {{0, 50, -1, 0}, {c.start_s, 0, -1, 0}, {c.end_s, 50, -1, 0}};
  auto config = two_clusters(net::testing::traced_link(
      traces::trace_ending_at(c.steps.empty() ? outage : c.steps, 100, "outage"), c.delay_ms, c.buffer_bdp));
  config.model = model;
  config.rto_min_ms = rto_min_ms;
  const auto network = make_sim_wan(config);
  std::vector<double> arrived(c.sends.size(), -1);
  for (int node = 0; node < 2; ++node)
    network->transport(node).on_receive([&](Message&& m) { arrived.at(m.tag) = now_s(); });
  for (std::size_t i = 0; i < c.sends.size(); ++i)
    ns3::Simulator::Schedule(ns3::Seconds(c.sends[i].at_s), [&, i]() {
      const Send& s = c.sends[i];
      network->transport(s.from).send(1 - s.from, static_cast<uint32_t>(i), std::vector<uint8_t>(s.bytes, 0), nullptr);
    });
  ns3::Simulator::Stop(ns3::Seconds(60));
  ns3::Simulator::Run();
  ns3::Simulator::Destroy();
  for (const double t : arrived) EXPECT_GT(t, 0) << c.name << ": a message never arrived";
  return arrived;
}

// The last message's arrival on the flow model over ns-3's, printed.
double flow_over_packet(const OutageCase& c, int rto_min_ms) {
  const double packet = arrivals(c, net::NetworkModel::packet, rto_min_ms).back();
  const double flow = arrivals(c, net::NetworkModel::flow, rto_min_ms).back();
  std::printf("[flow vs packet] %s, %.0f ms one way, outage %.1f-%.1f s, rto_min_ms %d: packet %.3f s, flow %.3f s, "
              "ratio %.3f\n",
              c.name.c_str(), c.delay_ms, c.start_s, c.end_s, rto_min_ms, packet, flow, flow / packet);
  return flow / packet;
}

const std::vector<Send> kBulk = {{0, 0, 20'000'000}};
const std::vector<Send> kWarmThenSentIntoIt = {{0, 0, 100'000}, {1.5, 0, 2'000'000}};
const std::vector<Send> kWarmCongestionAvoidance = {{0, 0, 5'000'000}, {1.5, 0, 5'000'000}};
const std::vector<Send> kSentAsItCloses = {{0, 0, 100'000}, {0.95, 0, 2'000'000}};
const std::vector<Send> kBothWays = {{0, 0, 20'000'000}, {0, 1, 20'000'000}};

// Without lost bytes the outage only pauses the transfer, on ns-3 as in the
// model, however many timeouts fired: a bulk transfer in congestion
// avoidance (its slow-start loss long repaired), and a connection in
// congestion avoidance handed a message during the outage.
TEST_F(SimFlowOutageTest, WithoutLostBytesAnOutageOnlyPausesTheTransfer) {
  for (const int rto_min_ms : {0, 200}) {
    for (const double end : {2.2, 4.2}) EXPECT_NEAR(flow_over_packet({"20 MB", 10, 1, end, kBulk}, rto_min_ms), 1, 0.02);
  }
  EXPECT_NEAR(flow_over_packet({"5 MB warm, 5 MB sent at 1.5 s", 10, 1, 4.2, kWarmCongestionAvoidance}, 0), 1, 0.02);
  // No timeout at all (the first would come 1 s after the send).
  EXPECT_NEAR(flow_over_packet({"100 kB warm, 2 MB sent at 1.5 s", 10, 1, 2.2, kWarmThenSentIntoIt}, 0), 1, 0.02);
  // One timeout with lost bytes (the slow-start loss at 0.9 s, a round trip
  // before the outage): ns-3 still resumes at once.
  for (const double end : {2.2, 3.5}) EXPECT_NEAR(flow_over_packet({"20 MB", 50, 1, end, kBulk}, 0), 1, 0.04);
  EXPECT_NEAR(flow_over_packet({"100 kB warm, 2 MB sent at 1.5 s", 10, 1, 4.2, kWarmThenSentIntoIt}, 0), 1, 0.02);
}

// With lost bytes and a second timeout ns-3 crosses the holes slowly: the
// model waits for the backed-off retransmission.
TEST_F(SimFlowOutageTest, ASecondTimeoutWithLostBytesCostsTheBackedOffRetransmission) {
  EXPECT_NEAR(flow_over_packet({"20 MB", 50, 1, 4.2, kBulk}, 0), 1, 0.05);
  for (const double end : {2.2, 4.2})
    EXPECT_NEAR(flow_over_packet({"100 kB warm, 2 MB sent at 1.5 s", 10, 1, end, kWarmThenSentIntoIt}, 200), 1, 0.08);
  EXPECT_NEAR(flow_over_packet({"100 kB warm, 2 MB sent at 0.95 s", 10, 1, 2.2, kSentAsItCloses}, 200), 1, 0.08);
  const double late = flow_over_packet({"20 MB", 50, 1, 6.0, kBulk}, 0);
  EXPECT_GT(late, 0.85);
  EXPECT_LT(late, 1);
}

// Where the model is known to miss (docs/sim-flow.md, "Outages"), early:
// ns-3's recovery from two timeouts at 50 ms with Linux's timers; an outage
// during both directions' first loss episode, which ends in a timeout on
// ns-3 without an outage too; one that begins as a message's slow start
// overflows the queue; and late: a window sent into the outage with
// Linux's timers, which ns-3 recovers at once. The bounds pin today's gap.
TEST_F(SimFlowOutageTest, KnownGapsStayWhereTheyAre) {
  for (const double ratio : {flow_over_packet({"20 MB", 50, 1, 2.2, kBulk}, 200),
                             flow_over_packet({"20 MB both ways", 10, 1, 2.2, kBothWays}, 0),
                             flow_over_packet({"20 MB both ways", 10, 1, 2.2, kBothWays}, 200),
                             flow_over_packet({"100 kB warm, 2 MB sent at 0.95 s", 10, 1, 2.2, kSentAsItCloses}, 0)}) {
    EXPECT_LT(ratio, 1);
    EXPECT_GT(ratio, 0.45);
  }
  const double late = flow_over_packet({"5 MB warm, 5 MB sent at 1.5 s", 10, 1, 4.2, kWarmCongestionAvoidance}, 200);
  EXPECT_GT(late, 1);
  EXPECT_LT(late, 1.15);
}

// The exchange through an outage once both ways are steady: the outage adds
// what it adds on ns-3, so the ratio is the one without an outage (0.89,
// "Known gaps" in docs/sim-flow.md).
TEST_F(SimFlowOutageTest, BothWaysInSteadyStateTheOutageAddsWhatItAddsOnNs3) {
  for (const int rto_min_ms : {0, 200}) {
    const double steady = flow_over_packet({"20 MB both ways", 10, 3, 4.2, kBothWays}, rto_min_ms);
    const double no_outage = flow_over_packet({"20 MB both ways", 10, 50, 50.5, kBothWays}, rto_min_ms);
    EXPECT_NEAR(steady, no_outage, 0.03);
  }
}

// The Starlink trace around its first outage (scenarios/real-starlink-outage.yaml
// from 5 s): 27.5, 3.1, 0, 0 and 2.5 Mbps for a second each, then 53.5;
// 20 ms one way, buffer 2 BDP. One way the model is within 1% of ns-3.
// Both ways it is early (a known gap, docs/sim-flow.md "Outages"): with
// 3.1 Mbps in place of the outage by the both-ways gap ("Known gaps"),
// and the outage costs ns-3 more than the model. The bounds pin both.
TEST_F(SimFlowOutageTest, TheStarlinkOutageShape) {
  const std::vector<traces::TraceStep> starlink = {
      {0, 27.5, -1, 0}, {1, 3.1, -1, 0}, {2, 0, -1, 0}, {4, 2.5, -1, 0}, {5, 53.5, -1, 0}};
  EXPECT_NEAR(flow_over_packet({"20 MB, Starlink's shape", 20, 2, 4, kBulk, starlink, 2}, 0), 1, 0.01);
  const double both_ways = flow_over_packet({"20 MB both ways, Starlink's shape", 20, 2, 4, kBothWays, starlink, 2}, 0);
  std::vector<traces::TraceStep> no_outage = starlink;
  no_outage[2].mbps = 3.1;
  const double both_ways_no_outage =
      flow_over_packet({"20 MB both ways, Starlink's shape, 3.1 Mbps for the outage", 20, 2, 4, kBothWays, no_outage, 2}, 0);
  EXPECT_GT(both_ways, 0.85);
  EXPECT_LT(both_ways, both_ways_no_outage);
  EXPECT_GT(both_ways_no_outage, 0.93);
  EXPECT_LT(both_ways_no_outage, 1);
}

// A looping trace: 10 MB at 50 Mbps take 1.66 s on the wire, of which
// about 0.85 s pass before the outage from 1 to 4 s; the rest when the link
// is back.
TEST_F(SimFlowOutageTest, ResumesAfterAnOutage) {
  const auto link =
      net::testing::traced_link(traces::Trace({{0, 50, -1, 0}, {1, 0, -1, 0}, {4, 50, -1, 0}}, "outage"), 10);
  auto config = two_clusters(link);
  config.model = net::NetworkModel::flow;
  const auto network = make_sim_wan(config);
  double arrived = -1;
  network->transport(1).on_receive([&](Message&&) { arrived = now_s(); });
  network->transport(0).send(1, 0, std::vector<uint8_t>(10'000'000, 0), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(30));
  ns3::Simulator::Run();
  EXPECT_GT(arrived, 4.7);
  EXPECT_LT(arrived, 4.8);
}

}  // namespace
}  // namespace st::sim
