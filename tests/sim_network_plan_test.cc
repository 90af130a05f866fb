// What the ns-3 backend adds to the neutral network rules (plan_sim_network
// in sim/sim_network.h): one delay per point-to-point link, ns-3 congestion
// controls. No simulation runs here.
#include <gtest/gtest.h>

#include "sim/sim_network.h"
#include "tests/net_test_util.h"

namespace st::sim {
namespace {

// Cluster a with 2 nodes, b with 1, 115 Mbps and 20 ms both ways.
TopologyConfig two_clusters() { return net::testing::two_clusters(net::testing::constant_link(115, 20), 2, 1); }

std::string sim_plan_error(const TopologyConfig& config) {
  try {
    plan_sim_network(config);
  } catch (const std::invalid_argument& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(SimNetworkPlan, OneDelayPerPointToPointLink) {
  TopologyConfig config = two_clusters();
  config.wan[{1, 0}].delay_ms = 30;
  EXPECT_NE(sim_plan_error(config).find("delay_ms 20 differs from 'b->a' delay_ms 30"), std::string::npos);
  EXPECT_NO_THROW(net::plan_network(config));  // the neutral rules allow it (the emulator can)

  config = two_clusters();
  traces::TraceStep step;
  step.mbps = 100;
  step.delay_ms = 40;
  config.wan[{0, 1}].trace = traces::Trace({step}, "delays");
  config.wan[{1, 0}].trace = traces::Trace({step}, "delays");
  EXPECT_NE(sim_plan_error(config).find("both traces give per-step delays"), std::string::npos);
}

TEST(SimNetworkPlan, CongestionControlsMapToNs3) {
  EXPECT_EQ(ns3_tcp_type_name("cubic"), "ns3::TcpCubic");
  EXPECT_EQ(ns3_tcp_type_name("newreno"), "ns3::TcpNewReno");
  TopologyConfig config = two_clusters();
  config.wan[{0, 1}].tcp = "reno2";
  EXPECT_NE(sim_plan_error(config).find("tcp 'reno2': unknown congestion control (known: cubic, newreno"),
            std::string::npos);
  EXPECT_EQ(sim_plan_error(two_clusters()), "(no error)");
}

}  // namespace
}  // namespace st::sim
