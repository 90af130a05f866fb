// The flow-level model alone (sim/flow/flow_model.h): sharing, the window,
// outages and idle restarts, on hand-built links, with the times worked out
// in each test from the model's rules. No simulator: the test moves time.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "sim/flow/flow_model.h"

namespace st::sim::flow {
namespace {

constexpr double kMbps = 1e6 / 8;  // bytes per second

TcpConstants plain() {
  TcpConstants k;
  k.segment_bytes = 1000;
  k.header_bytes = 0;  // wire bytes = payload bytes: rates are easy to check
  k.avoidance_utilization = 1;
  k.standing_queue_fill = 0;
  k.overshoot_loss = false;  // slow start ends when the link fills
  return k;
}

// One connection over a WAN link each way (`mbps`, `delay_s` one way,
// `buffer_bytes`; its ACKs on the way back), opened at time 0 and moved to
// `ready_s`.
struct OneWan {
  OneWan(TcpConstants k, double mbps, double delay_s, double buffer_bytes, double ready_s)
      : model(k),
        wan(model.add_link(mbps * kMbps, delay_s, buffer_bytes)),
        back(model.add_link(mbps * kMbps, delay_s, buffer_bytes)),
        c(model.add_connection({wan}, {back}, 0)) {
    model.advance_to(ready_s);
  }
  FlowModel model;
  const int wan, back, c;
};

// Runs the model until idle; returns each delivered message's arrival time.
std::map<uint64_t, double> run_until_idle(FlowModel& model, double from_s = 0) {
  std::map<uint64_t, double> arrivals;
  double now = from_s;
  for (int events = 0; model.next_event_s() < FlowModel::kNever; ++events) {
    if (events > 100000) ADD_FAILURE() << "the model never went idle";
    if (events > 100000) break;
    now = std::max(now, model.next_event_s());
    for (const auto& m : model.advance_to(now))
      if (m.kind == FlowModel::Milestone::Kind::delivered) arrivals[m.id] = m.at_s;
  }
  return arrivals;
}

TEST(FlowModel, ABulkTransferSlowStartsThenRunsAtTheLinkRate) {
  OneWan w(plain(), 100, 0.020, 1e6, 0.040);  // the handshake: one RTT
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 10'000'000, 1, 0.040);
  EXPECT_TRUE(model.in_slow_start(c));
  const auto arrivals = run_until_idle(model, 0.040);
  // BDP = 12.5 MB/s x 40 ms = 500 kB. Rounds of 40 ms pass 10, 20, 40, 80,
  // 160, 320 kB (the window is the limit), then 640 kB > 500 kB: the link
  // is, slow start ends. 630 kB pass in the six window-bound rounds (240 ms);
  // the other 9.37 MB at 12.5 MB/s take 0.7496 s; +20 ms one way.
  const double expected = 0.040 + 6 * 0.040 + (10'000'000 - 630'000) / (100 * kMbps) + 0.020;
  EXPECT_NEAR(arrivals.at(1), expected, 1e-6);
  EXPECT_FALSE(model.in_slow_start(c));
}

TEST(FlowModel, SlowStartOvershootLosesWhatThePipeCannotHold) {
  TcpConstants k = plain();
  k.overshoot_loss = true;
  OneWan w(k, 100, 0.020, 500'000, 0.040);  // BDP 500 kB, buffer 500 kB: the pipe holds 1 MB
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 10'000'000, 1, 0.040);
  const auto arrivals = run_until_idle(model, 0.040);
  // Windows 10 .. 320 kB (630 kB pass in 6 rounds), then 640 kB: the link
  // passes 500 kB that round and cwnd becomes 1140 kB > 1 MB: 140 kB are
  // lost and cross again; cwnd 0.7 x 1140 kB covers the BDP, so the link
  // stays full: the transfer takes 140 kB longer than without the loss.
  EXPECT_EQ(model.loss_episodes(c), 1u);
  EXPECT_NEAR(model.cwnd_bytes(c), 0.7 * 1'140'000, 1e-6);
  const double expected = 0.040 + 6 * 0.040 + (10'000'000 + 140'000 - 630'000) / (100 * kMbps) + 0.020;
  EXPECT_NEAR(arrivals.at(1), expected, 1e-6);
}

TEST(FlowModel, ABurstFromAWindowLargerThanThePipeOverflowsAtOnce) {
  TcpConstants k = plain();
  k.overshoot_loss = true;
  OneWan w(k, 100, 0.020, 500'000, 0.040);
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 10'000'000, 1, 0.040);
  run_until_idle(model, 0.040);
  const double cwnd = model.cwnd_bytes(c);  // 798 kB: under the 1 MB pipe
  EXPECT_NEAR(cwnd, 798'000, 1e-6);
  model.advance_to(5);
  model.send(c, 600'000, 2, 5);
  EXPECT_EQ(model.loss_episodes(c), 1u);  // a 600 kB burst fits in the pipe
  run_until_idle(model, 5);
  // The link drops to 20 Mbps: the pipe holds 100 kB + 500 kB, and a 2 MB
  // burst from the 798 kB window loses 198 kB at once.
  model.advance_to(10);
  model.set_link_rate(w.wan, 20 * kMbps, 10);
  model.send(c, 2'000'000, 3, 10);
  EXPECT_EQ(model.loss_episodes(c), 2u);
  EXPECT_NEAR(model.cwnd_bytes(c), 0.7 * 798'000, 1e-6);
  const auto arrivals = run_until_idle(model, 10);
  EXPECT_NEAR(arrivals.at(3), 10 + (2'000'000 + 198'000) / (20 * kMbps) + 0.020, 1e-6);
}

TEST(FlowModel, ConnectionsShareABottleneckMaxMin) {
  FlowModel model(plain());
  const int wan = model.add_link(90 * kMbps, 0.001, 1e6);
  const int slow = model.add_link(10 * kMbps, 0.001, 1e6);  // c3 is held here
  const int ack = model.add_link(1e6 * kMbps, 0.001, 1e6);
  const int c1 = model.add_connection({wan}, {ack}, 0);
  const int c2 = model.add_connection({wan}, {ack}, 0);
  const int c3 = model.add_connection({slow, wan}, {ack}, 0);
  model.advance_to(1);
  for (const int c : {c1, c2, c3}) model.send(c, 1'000'000'000, 1, 1);
  model.advance_to(5);  // long past slow start
  EXPECT_NEAR(model.rate_bytes_per_s(c3), 10 * kMbps, 1e-3);
  EXPECT_NEAR(model.rate_bytes_per_s(c1), 40 * kMbps, 1e-3);  // (90 - 10) / 2: c3's leftover shared
  EXPECT_NEAR(model.rate_bytes_per_s(c2), 40 * kMbps, 1e-3);
}

TEST(FlowModel, AcksTakeTheirShareOfTheReversePath) {
  TcpConstants k = plain();
  k.header_bytes = 50;  // 1000-byte segments: data 1.05 wire bytes per byte, ACKs 50 per 2000
  FlowModel model(k);
  const int ab = model.add_link(100 * kMbps, 0.001, 1e6);
  const int ba = model.add_link(100 * kMbps, 0.001, 1e6);
  const int forward = model.add_connection({ab}, {ba}, 0);
  const int backward = model.add_connection({ba}, {ab}, 0);
  model.advance_to(1);
  model.send(forward, 1'000'000'000, 1, 1);
  model.send(backward, 1'000'000'000, 2, 1);
  model.advance_to(5);
  // Each link: 1.05 r + 0.025 r = 12.5 MB/s.
  EXPECT_NEAR(model.rate_bytes_per_s(forward), 100 * kMbps / 1.075, 1e-3);
  EXPECT_NEAR(model.rate_bytes_per_s(backward), 100 * kMbps / 1.075, 1e-3);
}

TEST(FlowModel, AvoidanceUtilizationLeavesPartOfTheLinkIdleOnlyWhenDataFlowsBothWays) {
  TcpConstants k = plain();
  k.avoidance_utilization = 0.8;
  FlowModel model(k);
  const int wan = model.add_link(100 * kMbps, 0.001, 1e6);
  const int back = model.add_link(100 * kMbps, 0.001, 1e6);
  const int c = model.add_connection({wan}, {back}, 0);
  const int reverse = model.add_connection({back}, {wan}, 0);
  model.advance_to(1);
  model.send(c, 1'000'000'000, 1, 1);
  model.advance_to(5);
  EXPECT_FALSE(model.in_slow_start(c));
  EXPECT_NEAR(model.rate_bytes_per_s(c), 100 * kMbps, 1e-3);  // one way: the link is full
  model.send(reverse, 1'000'000'000, 2, 5);
  model.advance_to(9);
  EXPECT_NEAR(model.rate_bytes_per_s(c), 80 * kMbps, 1e-3);
  EXPECT_NEAR(model.rate_bytes_per_s(reverse), 80 * kMbps, 1e-3);
}

TEST(FlowModel, ASmallMessageInsideTheWindowTakesItsSerialisationAndOneWay) {
  OneWan w(plain(), 100, 0.020, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 5000, 7, 1);  // half the initial window of 10 segments
  const auto arrivals = run_until_idle(model, 1);
  EXPECT_NEAR(arrivals.at(7), 1 + 5000 / (100 * kMbps) + 0.020, 1e-9);
}

TEST(FlowModel, MessagesOfOneConnectionArriveInOrder) {
  OneWan w(plain(), 10, 0.005, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  for (uint64_t id = 0; id < 20; ++id) model.send(c, 1000 + 977 * id, id, 1);
  const auto arrivals = run_until_idle(model, 1);
  ASSERT_EQ(arrivals.size(), 20u);
  for (uint64_t id = 1; id < 20; ++id) EXPECT_LE(arrivals.at(id - 1), arrivals.at(id));
}

TEST(FlowModel, TheSenderIsHandedMessagesAsTheSocketBufferDrains) {
  TcpConstants k = plain();
  k.socket_buffer_bytes = 100'000;
  OneWan w(k, 8, 0.001, 1e6, 1);  // 1 MB/s
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 50'000, 1, 1);
  model.send(c, 100'000, 2, 1);  // 150 kB queued: fits once 50 kB have passed
  std::map<uint64_t, double> handed;
  double now = 1;
  for (const auto& m : model.advance_to(1)) handed[m.id] = m.at_s;
  while (model.next_event_s() < FlowModel::kNever && now < 100) {
    now = model.next_event_s();
    for (const auto& m : model.advance_to(now))
      if (m.kind == FlowModel::Milestone::Kind::handed) handed[m.id] = m.at_s;
  }
  EXPECT_DOUBLE_EQ(handed.at(1), 1.0);
  EXPECT_GT(handed.at(2), 1.0);
  // The 10 kB initial window exceeds the 2 kB BDP: the link is the limit
  // from the first round, so the first 50 kB pass at 1 MB/s.
  EXPECT_NEAR(handed.at(2), 1 + 0.050, 1e-9);
}

// A connection in congestion avoidance whose bytes wait in the bottleneck's
// queue through the outage: they leave when it ends and their ACKs restart
// the sender at once, whatever timeouts fired meanwhile (ns-3 does so,
// tests/sim_flow_outage_test.cc).
TEST(FlowModel, AnOutageOnlyPausesAConnectionWithoutLostBytes) {
  OneWan w(plain(), 8, 0.010, 1e6, 1);  // minimum RTO 1 s (ns-3)
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 10'000'000, 1, 1);
  model.advance_to(2);
  ASSERT_FALSE(model.in_slow_start(c));
  const double cwnd = model.cwnd_bytes(c);
  model.set_link_rate(w.wan, 0, 2);  // stalled from t = 2; timeouts at 3 and 5 s
  model.advance_to(5.5);
  EXPECT_EQ(model.rate_bytes_per_s(c), 0);
  model.set_link_rate(w.wan, 8 * kMbps, 5.5);
  EXPECT_DOUBLE_EQ(model.rate_bytes_per_s(c), 1e6);
  EXPECT_FALSE(model.in_slow_start(c));
  EXPECT_DOUBLE_EQ(model.cwnd_bytes(c), cwnd);
}

// The link closes at 1.5 s and 10 MB are sent at 2 s: a window lost into
// the outage (the queue holds no more), stalled from 2 s in slow start.
void send_into_an_outage(OneWan& w) {
  w.model.set_link_rate(w.wan, 0, 1.5);
  w.model.advance_to(2);
  w.model.send(w.c, 10'000'000, 1, 2);
}

// Bytes lost in the outage (here: a window sent into it, in slow start)
// must cross again; once a second timeout has fired, ns-3 waits for the
// next backed-off retransmission and starts again from one segment.
// Retransmissions at 2 + 1, 2 + 3, 2 + 7 s: the first after 5.5 is at 9.
TEST(FlowModel, ASecondTimeoutWithLostBytesCostsTheBackedOffRetransmission) {
  OneWan w(plain(), 8, 0.010, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  send_into_an_outage(w);
  model.advance_to(5.5);
  model.set_link_rate(w.wan, 8 * kMbps, 5.5);
  EXPECT_EQ(model.rate_bytes_per_s(c), 0);
  model.advance_to(8.999);
  EXPECT_EQ(model.rate_bytes_per_s(c), 0);
  model.advance_to(9.0001);
  EXPECT_GT(model.rate_bytes_per_s(c), 0);
  EXPECT_TRUE(model.in_slow_start(c));
  EXPECT_DOUBLE_EQ(model.cwnd_bytes(c), 1000);
}

// One timeout (at 3 s) before the link is back at 4.5: the connection
// resumes at once.
TEST(FlowModel, OneTimeoutWithLostBytesOnlyPausesTheStream) {
  OneWan w(plain(), 8, 0.010, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  send_into_an_outage(w);
  model.advance_to(4.5);
  model.set_link_rate(w.wan, 8 * kMbps, 4.5);
  EXPECT_GT(model.rate_bytes_per_s(c), 0);
}

// A loss episode within three round trips before the stall (its holes not
// yet filled) counts as lost bytes; one long before does not.
TEST(FlowModel, ARecentLossEpisodeCountsAsLostBytes) {
  for (const double since_loss_s : {0.0, 10.0}) {
    TcpConstants k = plain();
    k.overshoot_loss = true;
    OneWan w(k, 8, 0.010, 10'000, 1);
    FlowModel& model = w.model;
    const int c = w.c;
    model.send(c, 100'000'000, 1, 1);
    double now = 1;
    while (model.loss_episodes(c) == 0 && now < 5) model.advance_to(now = model.next_event_s());
    ASSERT_EQ(model.loss_episodes(c), 1u);
    const double start = now + since_loss_s;
    model.advance_to(start);
    model.set_link_rate(w.wan, 0, start);
    model.advance_to(start + 3.5);  // timeouts 1 and 3 s into it
    model.set_link_rate(w.wan, 8 * kMbps, start + 3.5);
    EXPECT_EQ(model.rate_bytes_per_s(c) > 0, since_loss_s > 0) << "stalled " << since_loss_s << " s after the loss";
  }
}

// Linux's rto_min r (ns-3's MinRto and ClockGranularity both r, as
// links.rto_min_ms sets them) puts the timeout at the round trip plus r:
// 0.020 + 0.2 here, so the retransmissions fall at 2 + 0.22, 0.66, 1.54,
// 3.30 and 6.82 s.
TEST(FlowModel, LinuxsRtoMinIsAddedToTheRoundTrip) {
  TcpConstants k = plain();
  k.min_rto_s = k.clock_granularity_s = 0.2;
  OneWan w(k, 8, 0.010, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  send_into_an_outage(w);
  model.advance_to(5.5);
  model.set_link_rate(w.wan, 8 * kMbps, 5.5);
  model.advance_to(8.8199);
  EXPECT_EQ(model.rate_bytes_per_s(c), 0);
  model.advance_to(8.8201);
  EXPECT_GT(model.rate_bytes_per_s(c), 0);
}

TEST(FlowModel, AShortOutageOnlyPausesTheStream) {
  OneWan w(plain(), 8, 0.010, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 10'000'000, 1, 1);
  model.advance_to(3);
  const bool slow_start_before = model.in_slow_start(c);
  model.set_link_rate(w.wan, 0, 3);
  model.advance_to(3.5);
  model.set_link_rate(w.wan, 8 * kMbps, 3.5);
  EXPECT_GT(model.rate_bytes_per_s(c), 0);
  EXPECT_EQ(model.in_slow_start(c), slow_start_before);
}

TEST(FlowModel, LinuxRestartsSlowStartAfterAnIdleRto) {
  for (const bool restart : {false, true}) {
    TcpConstants k = plain();
    k.restart_after_idle = restart;
    k.min_rto_s = 0.2;
    OneWan w(k, 100, 0.020, 1e6, 0.040);
    FlowModel& model = w.model;
    const int c = w.c;
    model.send(c, 10'000'000, 1, 0.040);
    run_until_idle(model, 0.040);
    const double cwnd = model.cwnd_bytes(c);
    ASSERT_FALSE(model.in_slow_start(c));
    model.advance_to(10);  // idle 9 s: 45 RTOs
    model.send(c, 10'000'000, 2, 10);
    EXPECT_EQ(model.in_slow_start(c), restart) << "restart_after_idle " << restart;
    if (restart) EXPECT_DOUBLE_EQ(model.cwnd_bytes(c), 10 * 1000.0);  // halved to the initial window
    else EXPECT_GE(model.cwnd_bytes(c), cwnd);
  }
}

TEST(FlowModel, PerStepLossCapsAvoidanceByTheSquareRootLaw) {
  OneWan w(plain(), 1000, 0.020, 1e6, 1);
  FlowModel& model = w.model;
  const int c = w.c;
  model.send(c, 100'000'000'000, 1, 1);
  model.advance_to(3);
  ASSERT_FALSE(model.in_slow_start(c));
  model.set_link_loss(w.wan, 0.01, 3);
  EXPECT_NEAR(model.rate_bytes_per_s(c), 1000 / 0.040 * std::sqrt(1.5 / 0.01), 1e-6);
}

TEST(FlowModel, LinkUsageAddsUpToTheBytesSent) {
  TcpConstants k = plain();
  k.header_bytes = 40;
  FlowModel model(k);
  const int wan = model.add_link(50 * kMbps, 0.010, 1e6);
  const int back = model.add_link(50 * kMbps, 0.010, 1e6);
  double wire = 0, payload = 0;
  model.on_link_usage([&](int link, double, double, double w, double p, double) {
    if (link == wan) wire += w, payload += p;
  });
  const int c = model.add_connection({wan}, {back}, 0);
  model.advance_to(1);
  model.send(c, 3'000'000, 1, 1);
  run_until_idle(model, 1);
  EXPECT_NEAR(payload, 3'000'000, 1e-3);
  EXPECT_NEAR(wire, 3'000'000 * 1.04, 1e-3);
}

TEST(FlowModel, RejectsBadInput) {
  TcpConstants k = plain();
  k.avoidance_utilization = 0;
  EXPECT_THROW(FlowModel{k}, std::invalid_argument);
  FlowModel model(plain());
  EXPECT_THROW(model.add_link(-1, 0, 0), std::invalid_argument);
  EXPECT_THROW(model.add_connection({3}, {}, 0), std::invalid_argument);
  const int l = model.add_link(1, 0, 0);
  EXPECT_THROW(model.set_link_loss(l, 1.0, 0), std::invalid_argument);
}

}  // namespace
}  // namespace st::sim::flow
