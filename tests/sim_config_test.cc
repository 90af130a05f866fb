// The sim config file: a good file loads; every bad input names the file,
// the key path and the line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "sim/sim_config.h"
#include "sim/flow/flow_model.h"
#include "sim/flow/flow_network.h"
#include "sim/sim_plan.h"


namespace st::sim {
namespace {

namespace fs = std::filesystem;

class SimConfigFile : public ::testing::Test {
 protected:
  // One file per test: ctest runs this suite's tests as parallel processes.
  std::string write(const std::string& text) {
    const auto path = fs::path(::testing::TempDir()) / file_name();
    std::ofstream(path) << text;
    return path.string();
  }
  static std::string file_name() {
    return std::string("sim_config_test_") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml";
  }
  // The error message of loading `text`, or "" when it loads.
  std::string error_of(const std::string& text) {
    try {
      load_sim_config(write(text));
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
};

constexpr const char* kClusters = "clusters:\n  - {name: a, nodes: 2}\n  - {name: b}\n";

TEST_F(SimConfigFile, ShippedExampleLoads) {
  const auto c = load_sim_config(std::string(ST_SOURCE_DIR) + "/scenarios/sim-2x2-115mbps.yaml");
  ASSERT_EQ(c.topology.clusters.size(), 2u);
  EXPECT_EQ(c.topology.wan.size(), 2u);
  EXPECT_NEAR(c.topology.wan.at({0, 1}).trace.mean_mbps(), 115, 25);
  EXPECT_EQ(c.compute.compute.kind, "profile");
  EXPECT_TRUE(fs::exists(c.compute.compute.profile_path)) << c.compute.compute.profile_path;
}

TEST_F(SimConfigFile, DefaultDirectionFillsTheRest) {
  const auto c = load_sim_config(write(std::string(kClusters) +
                                       "wan:\n  default: {mbps: 100, delay_ms: 10}\n  a->b: {mbps: 50, delay_ms: 10}\n"));
  EXPECT_EQ(c.topology.clusters[0].nodes, 2);
  EXPECT_EQ(c.topology.wan.at({0, 1}).constant_mbps, 50);
  EXPECT_EQ(c.topology.wan.at({1, 0}).constant_mbps, 100);
  EXPECT_EQ(c.compute.compute.kind, "measured");
}

TEST_F(SimConfigFile, TraceFilesAreRelativeToTheConfigAndScaled) {
  const auto trace = fs::path(::testing::TempDir()) / "sim_config_trace.csv";
  std::ofstream(trace) << "time_s,mbps\n0,10\n1,30\n";
  const auto c = load_sim_config(write(std::string(kClusters) + "wan:\n  default: {trace: " + trace.filename().string() +
                                       ", mean_mbps: 100}\n"));
  EXPECT_NEAR(c.topology.wan.at({1, 0}).trace.mean_mbps(), 100, 1e-6);
}

// links.rto_min_ms gives ns-3 Linux's rule (the timeout at least srtt +
// rto_min) through both of its attributes, with Linux's 40 ms delayed-ACK
// timer, and the flow model the same rule; without it both keep ns-3's own.
TEST_F(SimConfigFile, RtoMinSetsNs3sTimers) {
  const std::string wan = "wan:\n  default: {mbps: 100}\n";
  const auto linux_like = load_sim_config(write(std::string(kClusters) + wan + "rto_min_ms: 200\n"));
  EXPECT_EQ(linux_like.topology.rto_min_ms, 200);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(linux_like.topology).min_rto_s, 0.2);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(linux_like.topology).clock_granularity_s, 0.2);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(linux_like.topology).delayed_ack_timeout_s, 0.040);
  const flow::TcpConstants flow_k = flow::ns3_tcp_constants(plan_sim_network(linux_like.topology));
  EXPECT_DOUBLE_EQ(flow_k.min_rto_s, 0.2);
  EXPECT_DOUBLE_EQ(flow_k.clock_granularity_s, 0.2);
  const auto ns3_own = load_sim_config(write(std::string(kClusters) + wan));
  EXPECT_EQ(ns3_own.topology.rto_min_ms, 0);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(ns3_own.topology).min_rto_s, 1.0);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(ns3_own.topology).clock_granularity_s, 0.001);
  EXPECT_DOUBLE_EQ(ns3_tcp_timers(ns3_own.topology).delayed_ack_timeout_s, 0.2);
  EXPECT_DOUBLE_EQ(flow::ns3_tcp_constants(plan_sim_network(ns3_own.topology)).min_rto_s, 1.0);
}

TEST_F(SimConfigFile, ErrorsNameKeyPathAndLine) {
  struct Case {
    std::string text, expected;
  };
  const std::vector<Case> cases = {
      {std::string(kClusters) + "wan:\n  a->b: {mbps: 10}\n", "no entry for direction 'b->a'"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10, colour: red}\n", "wan.default.colour (line 5): unknown key"},
      {std::string(kClusters) + "wan:\n  default: {mbps: fast}\n", "wan.default.mbps (line 5): 'fast' is not a number"},
      {std::string(kClusters) + "wan:\n  default: {mbps: -3}\n", "wan.default.mbps (line 5): -3 is out of range"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10, trace: x.csv}\n", "give exactly one of"},
      {std::string(kClusters) + "wan:\n  default: {trace: missing.csv}\n", "wan.default.trace (line 5)"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10, tcp: warp}\n", "wan.default.tcp"},
      {std::string(kClusters) + "wan:\n  default: {generator: {kind: zigzag}}\n", "wan.default.generator"},
      {std::string(kClusters) + "wan:\n  a->c: {mbps: 10}\n", "no cluster named 'c'"},
      {"clusters:\n  - {name: a}\n  - {name: a}\n", "cluster name 'a' is used twice"},
      {"clusters: []\n", "needs at least one cluster"},
      {"clusters:\n  - {name: a, nodes: 0}\n", "clusters[0].nodes (line 2): 0 is out of range"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10}\ncompute: {model: guessed}\n", "compute.model (line 6): 'guessed' is not one of"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10}\ncompute: {model: profile}\n", "needs 'profile: FILE'"},
      {"clusters: [{name: a}]\ntopology: 1\n", "topology (line 2): unknown key"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10}\nrto_min_ms: 0\n", "rto_min_ms (line 6): 0 is out of range"},
      {std::string(kClusters) + "wan:\n  default: {mbps: 10}\nrto_min_ms: 0.5\n", "rto_min_ms (line 6)"},
      {"clusters: [{name: a}\n", "line"},
  };
  for (const auto& c : cases) {
    const std::string error = error_of(c.text);
    EXPECT_NE(error.find(c.expected), std::string::npos) << "input:\n" << c.text << "error: " << error;
    EXPECT_NE(error.find(file_name()), std::string::npos) << error;
  }
  EXPECT_NE(error_of("").find("mapping"), std::string::npos);
}

}  // namespace
}  // namespace st::sim
