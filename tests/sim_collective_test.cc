// The engine's dense ring allreduce over the simulated WAN, in virtual time,
// against the analytic ring cost: 2 (N - 1) steps, each moving 1/N of the
// gradient (plus frame and per-segment headers) at the WAN rate, plus one
// one-way delay per step.
#include <gtest/gtest.h>
#include <ns3/core-module.h>

#include <cmath>
#include <numeric>

#include "core/collective/communicator.h"
#include "core/collective/ring_allreduce.h"
#include "core/collective/sparse_allgather.h"
#include "core/comm/mailbox.h"
#include "core/model/model.h"
#include "sim/sim_executor.h"
#include "sim/sim_network.h"

namespace st::sim {
namespace {

constexpr double kWanMbps = 115, kWanDelayMs = 20;

struct Cluster {
  std::unique_ptr<SimNetwork> network;
  std::unique_ptr<SimExecutor> executor;
  std::vector<std::unique_ptr<comm::Mailbox>> mailboxes;
  std::vector<std::unique_ptr<collective::Communicator>> comms;
};

// `nodes_per_cluster` nodes in each of 2 clusters, constant WAN both ways.
Cluster build(int nodes_per_cluster) {
  ns3::Simulator::Destroy();
  TopologyConfig t;
  t.clusters = {{"a", nodes_per_cluster}, {"b", nodes_per_cluster}};
  WanDirection wan;
  wan.constant_mbps = kWanMbps;
  wan.delay_ms = kWanDelayMs;
  // A 2-BDP bottleneck buffer: after its first loss, Cubic's window (0.7 x
  // (BDP + buffer)) still covers the BDP, so one step's message goes out at
  // the line rate. With 1 BDP the window settles near 0.5 BDP here and every
  // step of the 2-node ring pays about one extra RTT (ratio 1.25, measured);
  // that is TCP's doing, and runs with small buffers show it.
  wan.buffer_bdp = 2.0;
  t.wan[{0, 1}] = wan;
  t.wan[{1, 0}] = wan;
  Cluster c;
  c.network = std::make_unique<SimNetwork>(t);
  c.executor = make_sim_executor(make_compute_model({"measured"}));
  for (int r = 0; r < c.network->world_size(); ++r) {
    c.mailboxes.push_back(std::make_unique<comm::Mailbox>(c.network->transport(r)));
    c.comms.push_back(std::make_unique<collective::Communicator>(c.network->transport(r), *c.mailboxes[r], *c.executor));
  }
  return c;
}

// Simulated seconds one allreduce of `n` floats takes on every rank; rank
// 0's traffic into `stats` when given.
double time_allreduce(Cluster& c, std::size_t n, std::vector<std::vector<float>>& data,
                      collective::AllreduceOptions options = {}, collective::CollectiveStats* stats = nullptr) {
  const int world = c.network->world_size();
  int done = 0;
  const auto start = c.executor->now();
  for (int r = 0; r < world; ++r)
    c.executor->post([&, r] {
      collective::ring_allreduce(*c.comms[r], data[r].data(), n, options,
                                 [&, r](std::exception_ptr error, const collective::CollectiveStats& s) {
                                   if (error) std::rethrow_exception(error);
                                   if (r == 0 && stats) *stats = s;
                                   ++done;
                                 });
    });
  c.executor->run_until([&] { return done == world; });
  return std::chrono::duration<double>(c.executor->now() - start).count();
}

// Simulated seconds one sparse allgather takes: every rank contributes
// `count` entries spread evenly over `numel` (not whole blocks, so indices
// go as u32 or u16), standing for `wire_numel`. Rank 0's result and traffic
// come back through the pointers.
double time_allgather(Cluster& c, std::size_t numel, std::size_t count, std::size_t wire_numel,
                      collective::CollectiveStats* stats, std::size_t* union_count) {
  const int world = c.network->world_size();
  std::vector<compress::SparseChunk> chunks(world);
  for (int r = 0; r < world; ++r) {
    chunks[r].reserve(count);
    for (std::size_t j = 0; j < count; ++j) {
      chunks[r].indices[j] = static_cast<uint32_t>(j * (numel / count) + static_cast<std::size_t>(r));
      chunks[r].values[j] = 1.0f;
    }
    chunks[r].count = count;
  }
  collective::SparseAllgatherOptions options;
  options.wire_numel = wire_numel;
  int done = 0;
  const auto start = c.executor->now();
  for (int r = 0; r < world; ++r)
    c.executor->post([&, r] {
      collective::sparse_ring_allgather(
          *c.comms[r], chunks[r].view(), numel, options,
          [&, r](std::exception_ptr error, compress::SparseChunk&& sum, const collective::CollectiveStats& s) {
            if (error) std::rethrow_exception(error);
            if (r == 0) *stats = s, *union_count = sum.count;
            ++done;
          });
    });
  c.executor->run_until([&] { return done == world; });
  return std::chrono::duration<double>(c.executor->now() - start).count();
}

// One message of `payload` bytes: 12-byte frame header, then per TCP
// segment 52 bytes of IP/TCP headers (timestamps on) and 2 of PPP.
double wire_seconds(double payload, int segment_bytes, double mbps) {
  const double stream = payload + 12;
  const double segments = std::ceil(stream / segment_bytes);
  return (stream + segments * 54) * 8 / (mbps * 1e6);
}

// The textbook ring cost for nodes that all sit across the WAN from their
// ring neighbour (one node per cluster): 2 (N - 1) steps, each one chunk of
// S / N at the WAN rate plus the one-way delay (WAN plus the two LAN hops
// with their store-and-forward of the last packet).
double analytic_ring_seconds(std::size_t n, int world, const NetworkPlan& plan, double lan_mbps, double lan_delay_ms) {
  const double chunk_bytes = 4.0 * static_cast<double>(n) / world;
  const double per_step = wire_seconds(chunk_bytes, plan.segment_bytes, kWanMbps) + kWanDelayMs / 1e3 +
                          2 * (lan_delay_ms / 1e3 + (plan.segment_bytes + 54) * 8 / (lan_mbps * 1e6));
  return 2.0 * (world - 1) * per_step;
}

// With several nodes per cluster only some ring hops cross the WAN, and a
// LAN hop's step overlaps the WAN's: each WAN direction carries one chunk
// per step, back to back, so the cost is 2 (N - 1) chunks at the WAN rate
// plus one pass of the delays (WAN one way, two LAN hops).
double analytic_wan_bound_seconds(std::size_t n, int world, const NetworkPlan& plan, double lan_delay_ms) {
  const double chunk_bytes = 4.0 * static_cast<double>(n) / world;
  return 2.0 * (world - 1) * wire_seconds(chunk_bytes, plan.segment_bytes, kWanMbps) + kWanDelayMs / 1e3 +
         2 * lan_delay_ms / 1e3;
}

class SimRingAllreduce : public ::testing::TestWithParam<int> {
 protected:
  void TearDown() override { ns3::Simulator::Destroy(); }
};

TEST_P(SimRingAllreduce, CnnGradientTakesTheAnalyticTimeWithin10Percent) {
  const std::size_t n = static_cast<std::size_t>(model::make_model("cnn", {1, 28, 28, 10}).parameter_count());
  Cluster c = build(GetParam());
  const int world = c.network->world_size();
  std::vector<std::vector<float>> data(world, std::vector<float>(n));
  for (int r = 0; r < world; ++r) std::iota(data[r].begin(), data[r].end(), static_cast<float>(r));
  {
    // Bulk traffic first: every connection leaves slow start and settles at
    // its congestion-avoidance window, as in a run's steady state.
    const std::size_t bulk = 4u << 20;
    std::vector<std::vector<float>> big(world, std::vector<float>(bulk, 1.0f));
    time_allreduce(c, bulk, big);
    time_allreduce(c, n, data);
  }
  for (int r = 0; r < world; ++r) std::fill(data[r].begin(), data[r].end(), static_cast<float>(r + 1));
  const double simulated = time_allreduce(c, n, data);
  const double analytic = GetParam() == 1 ? analytic_ring_seconds(n, world, c.network->plan(), 10000, 0.05)
                                          : analytic_wan_bound_seconds(n, world, c.network->plan(), 0.05);
  const float expected = static_cast<float>(world * (world + 1) / 2);
  for (int r = 0; r < world; ++r) {
    EXPECT_EQ(data[r].front(), expected);
    EXPECT_EQ(data[r].back(), expected);
  }
  std::cout << world << " nodes, " << n << " floats: simulated " << simulated << " s, analytic " << analytic
            << " s, ratio " << simulated / analytic << "\n";
  EXPECT_NEAR(simulated / analytic, 1.0, 0.10);
}

INSTANTIATE_TEST_SUITE_P(NodesPerCluster, SimRingAllreduce, ::testing::Values(1, 2));

// Sampled stages (core/train/node/layer_sampling.h): a collective over a
// sample of a tensor, told what it stands for, puts exactly the full
// tensor's bytes on ns-3's wire, so it takes the full tensor's time.
class SampledCollectives : public ::testing::Test {
 protected:
  void TearDown() override { ns3::Simulator::Destroy(); }
};

TEST_F(SampledCollectives, ASparseAllgatherOfASampleTakesTheFullChunksTimeAndBytes) {
  // 262144 elements keep 4096 (u32 indices, f32 values); a 1/16 sample of
  // 16384 keeps 256, which alone would go as u16 indices.
  const std::size_t full = 1u << 18, sample = full / 16;
  collective::CollectiveStats full_stats, sampled_stats;
  std::size_t full_union = 0, sampled_union = 0;
  Cluster whole = build(1);
  const double full_s = time_allgather(whole, full, 4096, 0, &full_stats, &full_union);
  Cluster sampled = build(1);
  const double sampled_s = time_allgather(sampled, sample, 256, full, &sampled_stats, &sampled_union);
  std::cout << "allgather: full " << full_s << " s, " << full_stats.bytes_sent << " B; sample " << sampled_s << " s, "
            << sampled_stats.bytes_sent << " B\n";
  EXPECT_EQ(full_stats.bytes_sent, 4u + 16u + 4096u * 8u);
  EXPECT_EQ(sampled_stats.bytes_sent, full_stats.bytes_sent);
  EXPECT_EQ(sampled_stats.bytes_received, full_stats.bytes_received);
  EXPECT_EQ(sampled_s, full_s);
  EXPECT_EQ(sampled_union, 2u * 256u);  // the sample's own result, whole
  EXPECT_EQ(full_union, 2u * 4096u);
  const auto wire = sampled.network->transport(0).stats();
  EXPECT_EQ(wire.bytes_sent, full_stats.bytes_sent);  // the transport counts what it carried
}

TEST_F(SampledCollectives, ARingAllreduceOfASampleTakesTheFullBuffersTimeAndBytes) {
  const std::size_t full = 1u << 20, sample = full / 32;
  collective::CollectiveStats full_stats, sampled_stats;
  Cluster whole = build(1);
  std::vector<std::vector<float>> full_data(2, std::vector<float>(full, 1.0f));
  const double full_s = time_allreduce(whole, full, full_data, {}, &full_stats);
  Cluster sampled = build(1);
  std::vector<std::vector<float>> sample_data(2, std::vector<float>(sample, 1.0f));
  collective::AllreduceOptions options;
  options.wire_scale = 32;
  const double sampled_s = time_allreduce(sampled, sample, sample_data, options, &sampled_stats);
  std::cout << "allreduce: full " << full_s << " s, " << full_stats.bytes_sent << " B; sample " << sampled_s
            << " s, " << sampled_stats.bytes_sent << " B\n";
  EXPECT_EQ(sampled_stats.bytes_sent, full_stats.bytes_sent);
  EXPECT_EQ(sampled_s, full_s);
  EXPECT_EQ(sample_data[0].front(), 2.0f);  // the sample itself is reduced
  EXPECT_EQ(sample_data[1].back(), 2.0f);
}

// A sample cannot stand for fewer elements than it has: every rank fails.
TEST_F(SampledCollectives, AWireNumelBelowTheSampleFailsTheAllgather) {
  Cluster c = build(1);
  collective::CollectiveStats stats;
  std::size_t count = 0;
  EXPECT_THROW(time_allgather(c, 4096, 64, 1024, &stats, &count), collective::CollectiveError);
}

}  // namespace
}  // namespace st::sim
