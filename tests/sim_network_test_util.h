#pragma once
// Helpers shared by the ns-3 network tests (sim_network_test.cc,
// sim_network_trace_test.cc).
#include <gtest/gtest.h>
#include <ns3/core-module.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/sim_network.h"
#include "sim/sim_wan.h"
#include "tests/net_test_util.h"
#include "traces/trace.h"

namespace st::sim::testing {

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

inline double now_s() { return ns3::Simulator::Now().GetSeconds(); }

using net::testing::constant_link;
using net::testing::two_clusters;

// A seeded random walk with 1 s steps, rescaled to the wanted mean.
inline traces::Trace random_walk_trace(int seconds, double mean_mbps, uint64_t seed) {
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

// A warm-up message of `warmup_bytes` from node 0 to node 1, 1 s of quiet,
// then one of `bytes`: the seconds from its send() to its delivery, on the
// network `config.model` names (a test failure when it never arrives).
inline double seconds_after_warmup(const TopologyConfig& config, std::size_t warmup_bytes, std::size_t bytes) {
  const auto network = make_sim_wan(config);
  double sent_at = -1, delivered_at = -1;
  network->transport(1).on_receive([&](comm::Message&& message) {
    if (message.tag == 1) {
      ns3::Simulator::Schedule(ns3::Seconds(1), [&]() {
        sent_at = now_s();
        network->transport(0).send(1, 2, std::vector<uint8_t>(bytes, 0x5a), nullptr);
      });
    } else {
      EXPECT_EQ(message.payload.size(), bytes);
      delivered_at = now_s();
      ns3::Simulator::Stop();
    }
  });
  network->transport(0).send(1, 1, std::vector<uint8_t>(warmup_bytes, 1), nullptr);
  ns3::Simulator::Stop(ns3::Seconds(600));
  ns3::Simulator::Run();
  ns3::Simulator::Destroy();
  EXPECT_GT(delivered_at, 0) << "the message never arrived";
  return delivered_at - sent_at;
}

}  // namespace st::sim::testing
