// Trace replay on the emulated WAN (emu/link_replay.h, emu/link_shaper.h):
// delivered vs configured rate in 1 s bins, as link.csv records them, while
// a flow keeps each replayed direction busy; and the outage gate (0 Mbps)
// holding packets without leaking. Needs root (skips otherwise).
//
// Three clusters, one node each, so that each replayed direction's ACKs
// return over a direction of their own (constant 1 Gbps): a->b replays
// traces/fluct-115mbps.csv (0-60 s) under one bulk TCP flow, c->b a real
// trace from ../shared/traces/real (60 s with its outage; skipped when
// absent) under UDP paced at 1.2x the trace. Bulk TCP through that outage
// is no measure of the shaper: its timeouts while the gate is closed leave
// it a small window, and it regained the rate over about 10 s in runs here
// and on CI (17-22% MAE), the link idle meanwhile.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "emu/emu_network.h"
#include "emu_test_util.h"
#include "tests/csv_test_util.h"
#include "traces/generators.h"
#include "traces/trace_io.h"

namespace st::emu {
namespace {

namespace fs = std::filesystem;
using testing::BulkFlow;

constexpr double kExcerptS = 60;

struct Row {
  int64_t second;
  std::string link;
  double configured, delivered;
};

std::vector<Row> parse_link_csv(const std::string& csv) {
  const auto table = st::testing::parse_csv(csv, "link.csv");
  const auto second = table.numbers("second"), configured = table.numbers("configured_mbps"),
             delivered = table.numbers("delivered_mbps");
  const auto link = table.texts("link");
  std::vector<Row> rows;
  for (std::size_t i = 0; i < table.rows.size(); ++i)
    rows.push_back({static_cast<int64_t>(second[i]), link[i], configured[i], delivered[i]});
  return rows;
}

// Mean absolute error over whole seconds [1, until) (second 0 is the flow's
// slow start), divided by the trace's mean over the same seconds.
double relative_mae(const std::vector<Row>& rows, const std::string& link, int64_t until, double* mean_out) {
  double error = 0, configured = 0;
  int count = 0;
  for (const auto& row : rows) {
    if (row.link != link || row.second < 1 || row.second >= until) continue;
    error += std::abs(row.delivered - row.configured);
    configured += row.configured;
    ++count;
  }
  if (mean_out) *mean_out = configured / std::max(1, count);
  return count == 0 ? 1.0 : error / configured;
}

net::WanDirection direction(const traces::Trace& trace, double mbps, double delay_ms) {
  net::WanDirection d;
  d.trace = trace;
  d.constant_mbps = mbps;
  d.delay_ms = delay_ms;
  d.buffer_bdp = 2;
  return d;
}

// One 60 s replay with a bulk TCP flow through a->b (and paced UDP through
// c->b when `real` is given): link.csv's rows and the CPU share stolen
// meanwhile.
struct Replayed {
  std::vector<Row> rows;
  double stolen_share = 0;
  std::string delay_method;
};

Replayed replay_with_busy_links(const net::TopologyConfig& config, const traces::Trace* real) {
  const auto network = testing::make_test_network(config);
  const EmulationPlan& plan = network->plan();
  const auto& a = plan.nodes[0];
  const auto& b = plan.nodes[1];
  const auto& c = plan.nodes[2];
  const CpuTimes host_start = cpu_times();
  network->replay().start_clock();
  BulkFlow from_a(b.netns, b.address, a.netns, 9100);
  std::unique_ptr<testing::PacedUdpFlow> from_c;
  if (real) from_c = std::make_unique<testing::PacedUdpFlow>(b.netns, b.address, c.netns, 9101, *real, 1.2);
  std::this_thread::sleep_for(std::chrono::duration<double>(kExcerptS + 0.2));
  network->replay().stop();
  from_a.stop();
  if (from_c) from_c->stop();
  Replayed replayed;
  replayed.stolen_share = testing::print_host_cpu_since(host_start);
  replayed.rows = parse_link_csv(network->replay().link_csv());
  replayed.delay_method = to_string(network->delay_method());
  return replayed;
}

TEST(EmuLinkReplay, DeliveredFollowsTheTraceWithinThreePercent) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  const fs::path root = fs::path(ST_SOURCE_DIR);
  const auto fluct = traces::crop(traces::read_trace((root / "traces/fluct-115mbps.csv").string()), 0, kExcerptS);
  const fs::path real_path = root.parent_path() / "shared/traces/real/starlink-autobahn-10min.csv";
  const bool have_real = fs::exists(real_path);
  if (!have_real) std::printf("real trace %s absent: only the fluct trace is checked\n", real_path.string().c_str());

  net::TopologyConfig config;
  config.clusters = {{"a", 1}, {"b", 1}, {"c", 1}};
  for (int from = 0; from < 3; ++from)
    for (int to = 0; to < 3; ++to)
      if (from != to) config.wan[{from, to}] = direction(traces::Trace(), 1000, 10);
  config.wan[{0, 1}] = direction(fluct, 0, 20);
  // Starlink on the Autobahn, 20-80 s: 0 Mbps at 47-48 s (27-28 s here).
  traces::Trace real;
  if (have_real) {
    real = traces::crop(traces::read_trace(real_path.string()), 20, 20 + kExcerptS);
    config.wan[{2, 1}] = direction(real, 0, 20);
  }

  // A measurement that misses while the hypervisor stole the CPU is taken
  // again, up to three in all; one the host kept up with stands.
  const auto until = static_cast<int64_t>(kExcerptS);
  Replayed replayed;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    replayed = replay_with_busy_links(config, have_real ? &real : nullptr);
    const bool within = relative_mae(replayed.rows, "a->b", until, nullptr) <= 0.03 &&
                        (!have_real || relative_mae(replayed.rows, "c->b", until, nullptr) <= 0.03);
    if (within || replayed.stolen_share <= testing::kStolenShareThatVoidsATiming) break;
    std::printf("missed while the hypervisor stole %.0f%% of the CPU (attempt %d of 3)\n",
                100 * replayed.stolen_share, attempt);
  }
  const auto& rows = replayed.rows;
  double mean = 0;
  const double fluct_mae = relative_mae(rows, "a->b", until, &mean);
  std::printf("a->b traces/fluct-115mbps.csv 0-60 s: link.csv MAE %.2f%% of the mean %.1f Mbps (delay by %s)\n",
              100 * fluct_mae, mean, replayed.delay_method.c_str());
  EXPECT_LE(fluct_mae, 0.03);
  if (have_real) {
    const double real_mae = relative_mae(rows, "c->b", until, &mean);
    std::printf("c->b starlink-autobahn-10min.csv 20-80 s (paced UDP): link.csv MAE %.2f%% of the mean %.1f Mbps\n",
                100 * real_mae, mean);
    EXPECT_LE(real_mae, 0.03);
    // The outage itself: nothing configured, nothing delivered.
    for (const auto& row : rows)
      if (row.link == "c->b" && (row.second == 27 || row.second == 28)) {
        EXPECT_EQ(row.configured, 0) << row.second;
        EXPECT_LT(row.delivered, 0.05) << "second " << row.second << " leaked through the closed gate";
      }
  }
  // The seconds more than 10% off, of the two replayed links.
  for (const auto& row : rows)
    if ((row.link == "a->b" || row.link == "c->b") && row.second >= 1 && row.second < until &&
        row.configured > 0 && std::abs(row.delivered - row.configured) > 0.1 * row.configured)
      std::printf("  %s second %lld: configured %.1f delivered %.1f\n", row.link.c_str(),
                  static_cast<long long>(row.second), row.configured, row.delivered);
}

// Two nodes exchanging 8 MB each way per iteration over
// traces/fluct-115mbps.csv 0-60 s (20 ms one way, buffer 2 BDP), 0.1 s of
// compute between exchanges, as
// SimNetworkTest.AnExchangeLoopOverTheTraceTakesTimeoutsWithLinuxsTimerValues
// runs it on ns-3: 2 timeouts and 79 iterations with ns-3's own timers, 12
// and 77 with Linux's values. The kernel (rto_min 200 ms) repairs its
// losses with few timeouts or none (0-2 in five runs here; docs/sim-network.md,
// "Retransmission timeout"); the bounds leave room for a loaded host.
TEST(EmuLinkReplay, AnExchangeLoopOverTheTraceTakesFewTimeoutsOnTheKernel) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  const auto fluct =
      traces::crop(traces::read_trace((fs::path(ST_SOURCE_DIR) / "traces/fluct-115mbps.csv").string()), 0, kExcerptS);
  net::TopologyConfig config;
  config.clusters = {{"a", 1}, {"b", 1}};
  config.wan[{0, 1}] = config.wan[{1, 0}] = direction(fluct, 0, 20);
  const auto network = testing::make_test_network(config);
  const EmulationPlan& plan = network->plan();
  const auto& a = plan.nodes[0];
  const auto& b = plan.nodes[1];
  const CpuTimes host_start = cpu_times();
  network->replay().start_clock();
  testing::ExchangeLoop loop({a.netns, a.address}, {b.netns, b.address}, 9200, 8'000'000, 0.1);
  std::this_thread::sleep_for(std::chrono::duration<double>(kExcerptS));
  const int iterations = loop.iterations();
  network->replay().stop();
  loop.stop();
  testing::print_host_cpu_since(host_start);
  long long timeouts = 0;
  for (const auto* node : {&a, &b}) {
    const auto counters = testing::tcp_ext_counters(node->netns);
    std::printf("%s: TCPTimeouts %lld, TCPLostRetransmit %lld, TCPSpuriousRTOs %lld\n", node->netns.c_str(),
                counters.at("TCPTimeouts"), counters.at("TCPLostRetransmit"), counters.at("TCPSpuriousRTOs"));
    timeouts += counters.at("TCPTimeouts");
  }
  std::printf("8 MB each way per iteration over fluct-115 0-60 s on the kernel: %lld timeouts, %d iterations\n",
              timeouts, iterations);
  EXPECT_LE(timeouts, 6);  // half of what ns-3 takes with Linux's values; 0-2 here
  // The loop ran: 72-78 here. A host the hypervisor steals from slows every
  // emulated exchange (up to 1.8x measured, docs/emu.md), so the bound is low.
  EXPECT_GE(iterations, 30);
}

// A bulk flow through a->b for 7.2 s of the gate's trace: link.csv's rows,
// and the CPU share the hypervisor stole meanwhile.
std::vector<Row> replay_gate(const net::TopologyConfig& config, double* stolen_share) {
  const auto network = testing::make_test_network(config);
  const EmulationPlan& plan = network->plan();
  const CpuTimes host_start = cpu_times();
  network->replay().start_clock();
  BulkFlow flow(plan.nodes[1].netns, plan.nodes[1].address, plan.nodes[0].netns, 9102);
  std::this_thread::sleep_for(std::chrono::duration<double>(7.2));
  network->replay().stop();
  flow.stop();
  *stolen_share = testing::print_host_cpu_since(host_start);
  return parse_link_csv(network->replay().link_csv());
}

// Second 3 lies wholly inside the outage: nothing passes the gate. The
// counters are sampled at each second by the replay thread, which on a
// loaded host can run a millisecond or so late, so second 2 may carry the
// bytes of that millisecond before the gate closed (1 ms at 100 Mbps is 0.1
// Mbps): it is held to 1% of the rate. Reopened: the rate is back within a
// second (no token debt), once TCP's retransmission timer lets the sender
// go on: seconds 5 and 6 within 5 Mbps of 100.
constexpr double kInsideOutageMbps = 0.05, kClosingSecondMbps = 1.0, kReopenedWithinMbps = 5;

bool gate_held_and_reopened(const std::vector<Row>& rows) {
  for (const auto& row : rows) {
    if (row.link != "a->b") continue;
    if (row.second == 3 && row.delivered >= kInsideOutageMbps) return false;
    if (row.second == 2 && row.delivered >= kClosingSecondMbps) return false;
    if ((row.second == 5 || row.second == 6) && std::abs(row.delivered - 100) > kReopenedWithinMbps) return false;
  }
  return true;
}

TEST(EmuLinkReplay, ClosedGateHoldsPacketsAndReopensWithoutDebt) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  // 100 Mbps, 0 Mbps from 2 to 4 s, then 100 Mbps again.
  const traces::Trace trace = traces::step_trace({{0, 100}, {2, 0}, {4, 100}}, 8);
  net::TopologyConfig config;
  config.clusters = {{"a", 1}, {"b", 1}};
  config.wan[{0, 1}] = direction(trace, 0, 5);
  config.wan[{1, 0}] = direction(traces::Trace(), 1000, 5);
  // Measured again (up to three times in all) when it misses while the
  // hypervisor stole the CPU, as DeliveredFollowsTheTrace is.
  std::vector<Row> rows;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    double stolen = 0;
    rows = replay_gate(config, &stolen);
    if (gate_held_and_reopened(rows) || stolen <= testing::kStolenShareThatVoidsATiming) break;
    std::printf("missed while the hypervisor stole %.0f%% of the CPU (attempt %d of 3)\n", 100 * stolen, attempt);
  }
  for (const auto& row : rows) {
    if (row.link != "a->b" || row.second > 6) continue;
    std::printf("  second %lld: configured %.1f delivered %.3f Mbps\n", static_cast<long long>(row.second),
                row.configured, row.delivered);
    if (row.second == 3) {
      EXPECT_LT(row.delivered, kInsideOutageMbps) << row.second;
    }
    if (row.second == 2) {
      EXPECT_LT(row.delivered, kClosingSecondMbps) << row.second;
    }
    if (row.second == 5 || row.second == 6) {
      EXPECT_NEAR(row.delivered, 100, kReopenedWithinMbps) << row.second;
    }
  }
}

}  // namespace
}  // namespace st::emu
