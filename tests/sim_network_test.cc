// The ns-3 network half (sim/topology.h, sim/ns3_transport.h,
// sim/link_recorder.h): every test is a real ns-3 simulation.
// docs/sim-network.md quotes the numbers these tests print.
#include <gtest/gtest.h>
#include <ns3/core-module.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>

#include "sim/ns3_transport.h"
#include "sim/topology.h"
#include "traces/trace_io.h"

namespace st::sim {
namespace {

using comm::Message;
using comm::TransportError;

// Wall time of one simulation, printed so slow tests show up.
class WallTimer {
 public:
  explicit WallTimer(std::string what) : what_(std::move(what)), start_(std::chrono::steady_clock::now()) {}
  ~WallTimer() {
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::printf("[wall] %s: %.2f s\n", what_.c_str(), wall);
  }

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_;
};

class SimNetworkTest : public ::testing::Test {
 protected:
  void TearDown() override { ns3::Simulator::Destroy(); }
};

double now_s() { return ns3::Simulator::Now().GetSeconds(); }

TopologyConfig two_clusters(const WanDirection& both_ways, int nodes_per_cluster = 1) {
  TopologyConfig config;
  config.clusters = {{"a", nodes_per_cluster}, {"b", nodes_per_cluster}};
  config.wan[{0, 1}] = both_ways;
  config.wan[{1, 0}] = both_ways;
  return config;
}

WanDirection constant_link(double mbps, double delay_ms) {
  WanDirection direction;
  direction.constant_mbps = mbps;
  direction.delay_ms = delay_ms;
  return direction;
}

struct MessageTiming {
  double simulated_s = 0;  // send() to delivery
  double analytic_s = 0;   // wire bytes / rate + one-way delay
  double wire_bytes = 0;
};

// One message of `bytes` from node 0 to node 1 over an established
// connection: a warm-up message first, then 1 s of quiet, then the message.
MessageTiming time_one_message(const TopologyConfig& config, std::size_t warmup_bytes, std::size_t bytes) {
  SimNetwork network(config);
  double sent_at = -1, delivered_at = -1;
  network.transport(1).on_receive([&](Message&& message) {
    if (message.tag == 1) {
      ns3::Simulator::Schedule(ns3::Seconds(1), [&]() {
        sent_at = now_s();
        network.transport(0).send(1, 2, std::vector<uint8_t>(bytes, 0x5a), nullptr);
      });
    } else {
      EXPECT_EQ(message.payload.size(), bytes);
      delivered_at = now_s();
      ns3::Simulator::Stop();
    }
  });
  network.transport(0).send(1, 1, std::vector<uint8_t>(warmup_bytes, 1), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(120));
  ns3::Simulator::Run();
  EXPECT_GT(delivered_at, 0) << "the message never arrived";

  const WanDirection& wan = config.wan.at({0, 1});
  const double stream = static_cast<double>(bytes + 12);  // payload + frame header
  const double segments = std::ceil(stream / network.segment_bytes());
  MessageTiming timing;
  timing.wire_bytes = stream + segments * (52 + 2);  // IP 20 + TCP 20 + timestamps 12, PPP 2
  const double one_way_s = (wan.delay_ms + 2 * config.lan_delay_ms) / 1000;  // WAN + two LAN hops
  timing.analytic_s = timing.wire_bytes * 8 / (wan.constant_mbps * 1e6) + one_way_s;
  timing.simulated_s = delivered_at - sent_at;
  return timing;
}

// Bulk traffic over a replayed trace, compared per second with the trace.
struct Tracking {
  int seconds = 0;                   // seconds compared
  double mean_expected_mbps = 0;     // mean header-adjusted rate over them
  double goodput_mae_mbps = 0;       // stream bytes at the receiver vs header-adjusted trace
  double wire_mae_mbps = 0;          // link.csv delivered vs configured
  double goodput_mae_percent() const { return 100 * goodput_mae_mbps / mean_expected_mbps; }
  double wire_mae_percent() const { return 100 * wire_mae_mbps / mean_expected_mbps; }
};

// Keeps a->b saturated for `seconds` of the trace (kOutstanding messages of
// kMessageBytes always queued: a new one goes out as each arrives) and
// samples the bytes received at node 1 once per second. The reverse
// direction (ACKs only) is a constant 1 Gbps link.
//
// Alignment: a byte that leaves the bottleneck at network time k reaches
// node 1 one WAN delay plus one LAN hop later, so the sample for second k is
// taken at k + that offset. Header adjustment: a full segment carries
// mtu - 52 stream bytes in mtu + 2 bytes on the wire (PPP 2, IP 20, TCP 20,
// timestamps 12), so the expected goodput is rate x (mtu - 52) / (mtu + 2).
// Skipped: second 0 (handshake and slow start) and the last, partial one.
Tracking track_trace(const traces::Trace& trace, int seconds, int mtu, const char* label) {
  constexpr std::size_t kMessageBytes = 4 << 20;
  constexpr int kOutstanding = 4;
  WanDirection forward;
  forward.trace = trace;
  forward.delay_ms = 20;
  TopologyConfig config = two_clusters(constant_link(1000, 20));
  config.wan[{0, 1}] = forward;
  config.mtu = mtu;
  WallTimer timer(std::string(label) + " (" + std::to_string(seconds) + " simulated s, mtu " + std::to_string(mtu) +
                  ")");
  SimNetwork network(config);
  Ns3Transport& sender = network.ns3_transport(0);
  Ns3Transport& receiver = network.ns3_transport(1);
  receiver.on_receive([&](Message&&) { sender.send(1, 7, std::vector<uint8_t>(kMessageBytes), nullptr); });
  for (int i = 0; i < kOutstanding; ++i) sender.send(1, 7, std::vector<uint8_t>(kMessageBytes), nullptr);

  const double offset_s = (forward.delay_ms + config.lan_delay_ms) / 1000;
  std::vector<uint64_t> received(static_cast<std::size_t>(seconds) + 1, 0);
  for (int k = 0; k <= seconds; ++k)
    ns3::Simulator::Schedule(ns3::Seconds(k + offset_s), [&received, &receiver, k]() {
      received[static_cast<std::size_t>(k)] = receiver.stream_bytes_from(0);
    });
  ns3::Simulator::Stop(ns3::Seconds(seconds + offset_s + 0.001));
  ns3::Simulator::Run();

  const double payload_share = static_cast<double>(mtu - 52) / (mtu + 2);
  const std::vector<LinkSecond> rows = network.recorder().rows(seconds);
  Tracking tracking;
  for (int k = 1; k < seconds; ++k) {
    const LinkSecond& row = rows[static_cast<std::size_t>(k)];  // link 0 is a->b
    EXPECT_EQ(row.link, "a->b");
    const double expected = row.configured_mbps * payload_share;
    const double goodput = static_cast<double>(received[k + 1] - received[k]) * 8 / 1e6;
    tracking.goodput_mae_mbps += std::abs(goodput - expected);
    tracking.wire_mae_mbps += std::abs(row.delivered_mbps - row.configured_mbps);
    tracking.mean_expected_mbps += expected;
    tracking.seconds += 1;
  }
  tracking.goodput_mae_mbps /= tracking.seconds;
  tracking.wire_mae_mbps /= tracking.seconds;
  tracking.mean_expected_mbps /= tracking.seconds;
  std::printf("%s: %d s compared, mean header-adjusted rate %.2f Mbps, goodput MAE %.3f Mbps (%.2f%%), "
              "link.csv delivered-vs-configured MAE %.3f Mbps (%.2f%% of the mean)\n",
              label, tracking.seconds, tracking.mean_expected_mbps, tracking.goodput_mae_mbps,
              tracking.goodput_mae_percent(), tracking.wire_mae_mbps, tracking.wire_mae_percent());
  return tracking;
}

// A seeded random walk with 1 s steps, rescaled to the wanted mean.
traces::Trace random_walk_trace(int seconds, double mean_mbps, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> step(0.0, 12.0);
  std::vector<double> rates;
  double rate = mean_mbps;
  for (int i = 0; i < seconds; ++i) {
    rates.push_back(rate);
    rate = std::clamp(rate + step(random), 0.3 * mean_mbps, 1.8 * mean_mbps);
  }
  double sum = 0;
  for (double r : rates) sum += r;
  std::vector<traces::TraceStep> steps;
  for (int i = 0; i < seconds; ++i) {
    traces::TraceStep s;
    s.time_s = i;
    s.mbps = rates[static_cast<std::size_t>(i)] * mean_mbps * seconds / sum;
    steps.push_back(s);
  }
  return traces::Trace(std::move(steps), "random walk seed " + std::to_string(seed));
}

}  // namespace

// (a) One 10 MB message on an established connection takes the analytic
// time. "Established" means the congestion window already covers the BDP:
// the warm-up is 1 MiB (a 1 kB warm-up leaves the 10 MB message in slow
// start, about 24% slower; printed for the record).
TEST_F(SimNetworkTest, TenMegabytesTakeTheAnalyticTime) {
  const TopologyConfig config = two_clusters(constant_link(115, 20));
  for (int mtu : {0, 9000}) {
    TopologyConfig sized = config;
    sized.mtu = mtu;
    MessageTiming timing;
    {
      WallTimer timer("10 MB at 115 Mbps, mtu " + std::string(mtu ? "9000" : "auto"));
      timing = time_one_message(sized, 1 << 20, 10'000'000);
    }
    const double error = timing.simulated_s / timing.analytic_s - 1;
    std::printf("10 MB, mtu %s: simulated %.6f s, analytic %.6f s (%.0f wire bytes), error %+.4f%%\n",
                mtu ? "9000" : "auto (1500)", timing.simulated_s, timing.analytic_s, timing.wire_bytes, 100 * error);
    EXPECT_LT(std::abs(error), 0.01);
    ns3::Simulator::Destroy();
  }
  const MessageTiming cold = time_one_message(config, 1000, 10'000'000);
  std::printf("10 MB after a 1 kB warm-up (slow start): simulated %.6f s vs analytic %.6f s (%+.1f%%)\n",
              cold.simulated_s, cold.analytic_s, 100 * (cold.simulated_s / cold.analytic_s - 1));
  EXPECT_GT(cold.simulated_s, cold.analytic_s);
}

// (b) Saturating traffic follows a replayed trace, second by second.
TEST_F(SimNetworkTest, BulkTrafficTracksSyntheticTrace) {
  const Tracking tracking = track_trace(random_walk_trace(60, 115, 42), 60, 9000, "random walk, 60 s, seed 42");
  EXPECT_LE(tracking.goodput_mae_percent(), 3.0);
  EXPECT_LE(tracking.wire_mae_percent(), 3.0);
}

TEST_F(SimNetworkTest, BulkTrafficTracksRealTrace) {
  const std::string path = std::string(ST_SHARED_TRACES_DIR) + "/real/5gophers-tmobile-uswest-5min.csv";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is missing";
  const traces::Trace trace = traces::read_trace_csv(path);
  const Tracking tracking = track_trace(trace, 300, 65535, "5gophers-tmobile-uswest-5min");
  EXPECT_LE(tracking.goodput_mae_percent(), 3.0);
  EXPECT_LE(tracking.wire_mae_percent(), 3.0);
}

// A 0 Mbps step closes the link (a few packets the device already held may
// leave) and traffic resumes when the rate returns.
TEST_F(SimNetworkTest, OutageStopsTheLinkAndTrafficResumes) {
  std::vector<traces::TraceStep> steps(3);
  steps[0].time_s = 0, steps[0].mbps = 100;
  steps[1].time_s = 3, steps[1].mbps = 0;
  steps[2].time_s = 5, steps[2].mbps = 100;
  const traces::Trace trace = traces::trace_ending_at(steps, 12, "outage");
  const int mtu = 9000;
  WanDirection forward;
  forward.trace = trace;
  TopologyConfig config = two_clusters(constant_link(1000, 20));
  config.wan[{0, 1}] = forward;
  config.mtu = mtu;
  SimNetwork network(config);
  Ns3Transport& sender = network.ns3_transport(0);
  network.transport(1).on_receive([&](Message&&) { sender.send(1, 1, std::vector<uint8_t>(4 << 20), nullptr); });
  for (int i = 0; i < 4; ++i) sender.send(1, 1, std::vector<uint8_t>(4 << 20), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(12));
  ns3::Simulator::Run();
  const std::vector<LinkSecond> rows = network.recorder().rows(12);
  for (int second : {3, 4}) {
    std::printf("outage second %d: %llu bytes delivered\n", second,
                static_cast<unsigned long long>(rows[second].delivered_bytes));
    EXPECT_LE(rows[second].delivered_bytes, 3u * (mtu + 2));
  }
  for (int second : {6, 7, 8, 9, 10}) EXPECT_NEAR(rows[second].delivered_mbps, 100, 3) << "second " << second;
}

// Per-step delay (from one direction's trace) moves the link's shared
// delay; per-step loss drops packets that TCP then repairs.
TEST_F(SimNetworkTest, TraceDelayAndLossSteps) {
  std::vector<traces::TraceStep> steps(2);
  steps[0].time_s = 0, steps[0].mbps = 100, steps[0].delay_ms = 10;
  steps[1].time_s = 2, steps[1].mbps = 100, steps[1].delay_ms = 50, steps[1].loss = 0.01;
  WanDirection forward;
  forward.trace = traces::trace_ending_at(steps, 10, "delay and loss");
  forward.delay_ms = 10;
  TopologyConfig config = two_clusters(constant_link(100, 10));
  config.wan[{0, 1}] = forward;
  config.mtu = 9000;
  SimNetwork network(config);
  std::vector<double> latency;
  double sent_at = 0;
  network.transport(1).on_receive([&](Message&& message) {
    if (message.tag < 3) latency.push_back(now_s() - sent_at);
  });
  auto send_small_at = [&](double at, uint32_t tag) {
    ns3::Simulator::Schedule(ns3::Seconds(at), [&, tag]() {
      sent_at = now_s();
      network.transport(0).send(1, tag, std::vector<uint8_t>(100), nullptr);
    });
  };
  send_small_at(1, 0);
  send_small_at(3, 1);
  // 1 MB through 1% loss, then a probe behind it.
  ns3::Simulator::Schedule(ns3::Seconds(4), [&]() {
    network.transport(0).send(1, 5, std::vector<uint8_t>(1 << 20), nullptr);
  });
  send_small_at(9, 2);
  ns3::Simulator::Stop(ns3::Seconds(10));
  ns3::Simulator::Run();
  ASSERT_EQ(latency.size(), 3u);
  std::printf("one-way latency of 100 B: %.4f s (10 ms step), %.4f s (50 ms step); 1 MB through 1%% loss: "
              "%llu wire bytes delivered a->b\n",
              latency[0], latency[1], static_cast<unsigned long long>(network.wan_totals()[0].wire_bytes));
  EXPECT_NEAR(latency[0], 0.010 + 0.0001, 0.0005);
  EXPECT_NEAR(latency[1], 0.050 + 0.0001, 0.0005);
  EXPECT_EQ(network.transport(1).stats().messages_received, 4u) << "the lossy transfer completed";
}

// (c) Order per pair, self-sends, callbacks never inline.
TEST_F(SimNetworkTest, ManySmallMessagesArriveInOrderIncludingToSelf) {
  TopologyConfig config = two_clusters(constant_link(100, 10), 2);
  SimNetwork network(config);
  const int world = network.world_size();
  ASSERT_EQ(world, 4);
  EXPECT_EQ(network.cluster_of(1), 0);
  EXPECT_EQ(network.cluster_of(2), 1);
  constexpr uint32_t kPerPair = 60;
  auto payload = [](int from, int to, uint32_t i) {
    return std::vector<uint8_t>(static_cast<std::size_t>((from * 7 + to * 13 + i * 101) % 3000 + 1),
                                static_cast<uint8_t>(from * 16 + to + i));
  };
  std::vector<std::vector<uint32_t>> next(world, std::vector<uint32_t>(world, 0));
  int errors = 0, completions = 0, self_late = 0;
  bool inside_send = false;
  for (int to = 0; to < world; ++to) {
    network.transport(to).on_receive([&, to](Message&& message) {
      EXPECT_FALSE(inside_send) << "receive handler ran inside send()";
      const int from = message.source;
      EXPECT_EQ(message.tag, next[from][to]) << from << " -> " << to;
      EXPECT_EQ(message.payload, payload(from, to, message.tag));
      next[from][to] = message.tag + 1;
      if (from == to && now_s() != 0.0) ++self_late;
    });
  }
  for (uint32_t i = 0; i < kPerPair; ++i) {
    for (int from = 0; from < world; ++from) {
      for (int to = 0; to < world; ++to) {
        inside_send = true;
        network.transport(from).send(to, i, payload(from, to, i), [&](std::exception_ptr error) {
          EXPECT_FALSE(inside_send) << "on_done ran inside send()";
          errors += error != nullptr;
          ++completions;
        });
        inside_send = false;
      }
    }
  }
  {
    WallTimer timer("many small messages, 2 x 2 nodes");
    ns3::Simulator::Stop(ns3::Seconds(10));
    ns3::Simulator::Run();
  }
  for (int from = 0; from < world; ++from)
    for (int to = 0; to < world; ++to) EXPECT_EQ(next[from][to], kPerPair) << from << " -> " << to;
  EXPECT_EQ(errors, 0);
  EXPECT_EQ(completions, world * world * static_cast<int>(kPerPair));
  EXPECT_EQ(self_late, 0) << "self-sends are delivered at the time they are sent";
  EXPECT_EQ(network.transport(0).stats().messages_received, world * kPerPair);
  EXPECT_THROW(network.transport(0).send(world, 0, {}, nullptr), std::invalid_argument);
}

TEST_F(SimNetworkTest, CloseFailsPendingSendsAndReportsTheLeaverOnce) {
  SimNetwork network(two_clusters(constant_link(100, 10), 2));
  std::vector<int> reports(4, 0);
  std::vector<int> delivered(4, 0);
  for (int rank = 0; rank < 4; ++rank) {
    network.transport(rank).on_receive([&, rank](Message&&) { ++delivered[rank]; });
    network.transport(rank).on_error([&, rank](const TransportError& error) {
      EXPECT_EQ(error.peer(), 3) << error.what();
      ++reports[rank];
    });
  }
  std::vector<comm::Rank> blamed;
  auto expect_failure = [&](std::exception_ptr error) {
    ASSERT_TRUE(error) << "expected this send to fail";
    try {
      std::rethrow_exception(error);
    } catch (const TransportError& failure) {
      blamed.push_back(failure.peer());
    }
  };
  // Sent at t = 0, still waiting for the handshake when rank 3 closes.
  network.transport(0).send(3, 1, std::vector<uint8_t>(1000), expect_failure);
  network.transport(3).send(0, 1, std::vector<uint8_t>(1000), expect_failure);
  ns3::Simulator::Schedule(ns3::MilliSeconds(1), [&]() {
    network.transport(3).close();
    network.transport(3).close();  // idempotent
    network.transport(3).send(2, 1, {}, expect_failure);
  });
  ns3::Simulator::Schedule(ns3::Seconds(1), [&]() {
    network.transport(1).send(3, 1, {}, expect_failure);
    network.transport(1).send(3, 2, {}, expect_failure);
    network.transport(0).send(2, 1, std::vector<uint8_t>(100), [](std::exception_ptr error) { EXPECT_FALSE(error); });
  });
  ns3::Simulator::Stop(ns3::Seconds(3));
  ns3::Simulator::Run();
  EXPECT_EQ(blamed, (std::vector<comm::Rank>{3, 3, 3, 3, 3}));
  EXPECT_EQ(reports, (std::vector<int>{1, 1, 0, 0})) << "each sender hears about the leaver once";
  EXPECT_EQ(delivered, (std::vector<int>{0, 0, 1, 0}));
}

TEST_F(SimNetworkTest, MissingWanDirectionIsAnErrorNamingIt) {
  TopologyConfig config = two_clusters(constant_link(100, 10));
  config.wan.erase({1, 0});
  try {
    SimNetwork network(config);
    FAIL() << "a missing direction must be rejected";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("missing WAN direction 'b->a'"), std::string::npos) << error.what();
  }
}

// Every congestion control name builds sockets that carry data.
TEST_F(SimNetworkTest, CongestionControlPerDirection) {
  for (const char* tcp : {"newreno", "bbr", "vegas"}) {
    WanDirection link = constant_link(100, 10);
    link.tcp = tcp;
    TopologyConfig config = two_clusters(link);
    config.mtu = 9000;
    const MessageTiming timing = time_one_message(config, 1 << 20, 2'000'000);
    std::printf("%s: 2 MB in %.4f s (analytic %.4f s)\n", tcp, timing.simulated_s, timing.analytic_s);
    EXPECT_LT(timing.simulated_s, 3 * timing.analytic_s) << tcp;
    ns3::Simulator::Destroy();
  }
}

// (d) The same run twice gives identical delivery times and link.csv.
namespace {

struct RunRecord {
  std::vector<int64_t> deliveries_ns;
  std::string link_csv;
};

RunRecord deterministic_run() {
  WanDirection forward;
  forward.trace = random_walk_trace(10, 115, 7);
  TopologyConfig config = two_clusters(forward, 2);
  config.wan[{1, 0}] = forward;
  config.mtu = 9000;
  SimNetwork network(config);
  RunRecord record;
  for (int rank = 0; rank < 4; ++rank) {
    network.transport(rank).on_receive([&, rank](Message&& message) {
      record.deliveries_ns.push_back(ns3::Simulator::Now().GetNanoSeconds() * 16 + message.source * 4 + rank);
      if (message.tag < 40)  // answer with a message of another size: traffic both ways
        network.transport(rank).send(message.source, message.tag + 1,
                                     std::vector<uint8_t>((message.tag * 7919) % (1 << 20) + 1), nullptr);
    });
  }
  for (int from = 0; from < 4; ++from)
    for (int to = 0; to < 4; ++to) network.transport(from).send(to, 0, std::vector<uint8_t>(1 << 20), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(10));
  ns3::Simulator::Run();
  record.link_csv = network.recorder().csv(network.now_s());
  return record;
}

}  // namespace

TEST_F(SimNetworkTest, SameRunTwiceIsIdentical) {
  RunRecord first, second;
  {
    WallTimer timer("deterministic run 1");
    first = deterministic_run();
  }
  ns3::Simulator::Destroy();
  {
    WallTimer timer("deterministic run 2");
    second = deterministic_run();
  }
  EXPECT_GT(first.deliveries_ns.size(), 100u);
  EXPECT_EQ(first.deliveries_ns, second.deliveries_ns);
  EXPECT_EQ(first.link_csv, second.link_csv);
}

// Replay schedules events forever; stop_replay() lets Run() end when idle.
// One cluster needs no WAN entry at all.
TEST_F(SimNetworkTest, StopReplayLetsTheSimulationEndAndOneClusterNeedsNoWan) {
  WanDirection link;
  link.trace = random_walk_trace(5, 100, 3);
  SimNetwork network(two_clusters(link));
  network.transport(1).on_receive([&](Message&&) { network.stop_replay(); });
  network.transport(0).send(1, 1, std::vector<uint8_t>(100000), nullptr);
  ns3::Simulator::Run();  // no Stop(): returns only if nothing is left to do
  EXPECT_GT(network.now_s(), 0.02);
  EXPECT_LT(network.now_s(), 5.0);
  ns3::Simulator::Destroy();

  TopologyConfig one;
  one.clusters = {{"solo", 3}};
  SimNetwork lan(one);
  int received = 0;
  lan.transport(2).on_receive([&](Message&& message) { received += static_cast<int>(message.payload.size()); });
  lan.transport(0).send(2, 1, std::vector<uint8_t>(5000), nullptr);
  lan.transport(1).send(2, 1, std::vector<uint8_t>(7000), nullptr);
  ns3::Simulator::Run();
  EXPECT_EQ(received, 12000);
  EXPECT_EQ(lan.wan_totals().size(), 0u);
}

// link.csv on disk: the header, then one row per link and second.
TEST_F(SimNetworkTest, WritesLinkCsv) {
  SimNetwork network(two_clusters(constant_link(50, 5)));
  network.transport(0).send(1, 1, std::vector<uint8_t>(1 << 20), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(2.5));
  ns3::Simulator::Run();
  const std::string path = ::testing::TempDir() + "sim_network_link.csv";
  network.write_link_csv(path);
  std::ifstream in(path);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header, LinkRecorder::kCsvHeader);
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 2 * 3);  // a->b and b->a, seconds 0, 1 and the partial 2
  const std::vector<LinkTotals> totals = network.wan_totals();
  ASSERT_EQ(totals.size(), 2u);
  EXPECT_EQ(totals[0].link, "a->b");
  EXPECT_GE(totals[0].payload_bytes, (1u << 20) + 12);
  EXPECT_GT(totals[0].wire_bytes, totals[0].payload_bytes);
  EXPECT_THROW(network.write_link_csv("/nonexistent-dir/link.csv"), std::runtime_error);
}
}  // namespace st::sim
