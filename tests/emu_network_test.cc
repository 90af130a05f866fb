// The emulated network itself (emu/emu_network.h): what it builds, that
// traffic flows through it with the configured delay, and that nothing is
// left once it is gone. Needs root (skips otherwise).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "emu/emu_network.h"
#include "emu/process.h"
#include "emu/run_registry.h"
#include "emu_test_util.h"
#include "tests/net_test_util.h"
#include "traces/generators.h"

namespace st::emu {
namespace {

using testing::BulkFlow;
using testing::median;
using testing::one_way_delays;

net::TopologyConfig two_clusters(double mbps, double delay_ms, int nodes_a = 1, int nodes_b = 1) {
  return net::testing::two_clusters(net::testing::constant_link(mbps, delay_ms, 2), nodes_a, nodes_b);
}

std::string run_in(const std::string& netns, const std::vector<std::string>& argv) {
  std::string output;
  const int status = run_in_netns(netns, argv, output);
  EXPECT_EQ(status, 0) << output;
  return output;
}

TEST(EmuNetwork, BuildsNamespacesLinksAndQdiscsAndRemovesThem) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  auto network = testing::make_test_network(two_clusters(100, 5, 2, 1));
  const EmulationPlan plan = network->plan();  // a copy: checked after the network is gone
  std::vector<ino_t> inodes;
  for (const auto& name : plan.namespaces()) {
    EXPECT_TRUE(netns_exists(name)) << name;
    inodes.push_back(netns_inode(name));
  }
  // The run is registered with this process as its owner.
  bool registered = false;
  for (const auto& run : list_runs()) registered |= run.run_id == plan.run_id && owner_alive(run);
  EXPECT_TRUE(registered);
  const std::string router = run_in(plan.routers[0].netns, {"tc", "qdisc", "show", "dev", plan.wan[0].out_ifname});
  EXPECT_NE(router.find("qdisc htb 1:"), std::string::npos) << router;
  EXPECT_NE(router.find("qdisc tbf 10:"), std::string::npos) << router;
  const std::string delay = network->delay_method() == DelayMethod::kNfqueue ? "bfifo 20:" : "netem 20:";
  EXPECT_NE(router.find(delay), std::string::npos) << router;
  if (network->delay_method() == DelayMethod::kNfqueue) {
    const std::string rules = run_in(plan.routers[1].netns, {"iptables", "-t", "mangle", "-S", "PREROUTING"});
    EXPECT_NE(rules.find("NFQUEUE --queue-num 0"), std::string::npos) << rules;
  }
  const std::string routes = run_in(plan.routers[0].netns, {"ip", "route", "show"});
  EXPECT_NE(routes.find("10.2.0.0/16 via 100.64.0.2 dev " + plan.wan[0].out_ifname), std::string::npos) << routes;
  // Nodes in one cluster reach each other, and the other cluster.
  EXPECT_EQ(one_way_delays(plan.nodes[0].netns, plan.nodes[1].netns, plan.nodes[1].address, 9000, 3, 0.01).size(), 3u);
  EXPECT_EQ(one_way_delays(plan.nodes[0].netns, plan.nodes[2].netns, plan.nodes[2].address, 9000, 3, 0.01).size(), 3u);
  EXPECT_EQ(read_sysctl(plan.routers[0].netns, "ipv4/ip_forward"), "1");
  const std::string node_routes = run_in(plan.nodes[0].netns, {"ip", "route", "show", "default"});
  EXPECT_NE(node_routes.find("congctl cubic"), std::string::npos) << node_routes;
  network.reset();
  for (const auto& name : plan.namespaces()) EXPECT_FALSE(netns_exists(name)) << name;
  for (const ino_t inode : inodes) EXPECT_TRUE(processes_in_netns(inode).empty());
  for (const auto& run : list_runs()) EXPECT_NE(run.run_id, plan.run_id);
}

// The retransmission timeout of a bulk flow from node 0 to node 1, read
// once it has carried 2 MB.
double kernel_rto_ms(const EmulationPlan& plan) {
  BulkFlow flow(plan.nodes[1].netns, plan.nodes[1].address, plan.nodes[0].netns, 9103);
  for (int waited = 0; flow.received_bytes() < 2'000'000 && waited < 1000; ++waited)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(flow.received_bytes(), 2'000'000u) << "the flow carried too little in 10 s";
  return flow.sender_rto_ms();
}

// links.rto_min_ms rides on each node's route, locked (TCP reads a route's
// rto_min only when it is locked); without it the route has none. The
// kernel's timeout is srtt + at least rto_min either way: above 200 ms
// without the key, under 200 ms with rto_min 50 (5 ms one way).
TEST(EmuNetwork, RtoMinReachesEveryNodesRouteAndTheKernel) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  for (const int rto_min_ms : {0, 50}) {
    auto config = two_clusters(100, 5);
    config.rto_min_ms = rto_min_ms;
    const auto network = testing::make_test_network(config);
    const EmulationPlan& plan = network->plan();
    EXPECT_EQ(network->describe().at("rto_min_ms"), rto_min_ms > 0 ? rto_min_ms : kLinuxDefaultRtoMinMs);
    for (const auto& node : plan.nodes) {
      const std::string route = run_in(node.netns, {"ip", "route", "show", "default"});
      if (rto_min_ms > 0) EXPECT_NE(route.find("rto_min lock 50ms"), std::string::npos) << route;
      else EXPECT_EQ(route.find("rto_min"), std::string::npos) << route;
      EXPECT_NE(route.find("congctl cubic"), std::string::npos) << route;
    }
    const double rto_ms = kernel_rto_ms(plan);
    std::printf("kernel RTO with rto_min_ms %d, 5 ms one way: %.0f ms\n", rto_min_ms, rto_ms);
    if (rto_min_ms > 0) EXPECT_LT(rto_ms, 200);
    else EXPECT_GE(rto_ms, 200);
  }
}

TEST(EmuNetwork, OneWayDelayIsTheConfiguredOne) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  const auto network = testing::make_test_network(two_clusters(100, 20));
  const EmulationPlan& plan = network->plan();
  network->replay().start_clock();
  const auto forward = one_way_delays(plan.nodes[0].netns, plan.nodes[1].netns, plan.nodes[1].address, 9001, 50, 0.02);
  const auto backward = one_way_delays(plan.nodes[1].netns, plan.nodes[0].netns, plan.nodes[0].address, 9002, 50, 0.02);
  ASSERT_EQ(forward.size(), 50u);
  ASSERT_EQ(backward.size(), 50u);
  const double a_to_b = median(forward) * 1000, b_to_a = median(backward) * 1000;
  std::printf("one-way delay (%s), configured 20 ms: a->b median %.3f ms, b->a median %.3f ms\n",
              to_string(network->delay_method()).c_str(), a_to_b, b_to_a);
  EXPECT_NEAR(a_to_b, 20.0, 1.0);
  EXPECT_NEAR(b_to_a, 20.0, 1.0);
  // The delay line reports how late it released packets (the manifest's
  // wan_links); netem's timing is the kernel's and is not reported.
  const nlohmann::json links = network->counters()["links"];
  for (const auto& [name, link] : links.items()) {
    if (network->delay_method() != DelayMethod::kNfqueue) {
      EXPECT_FALSE(link.contains("delay_late_packets")) << name;
      continue;
    }
    std::printf("%s: %s packets released a millisecond or more late, the worst by %.3f ms\n", name.c_str(),
                link.at("delay_late_packets").dump().c_str(), link.at("delay_worst_late_ms").get<double>());
    // A median within a millisecond (above) leaves at most half of them late.
    EXPECT_LE(link.at("delay_late_packets").get<uint64_t>(), link.at("packets").get<uint64_t>() / 2) << name;
    EXPECT_GE(link.at("delay_worst_late_ms").get<double>(), 0.0) << name;
  }
}

TEST(EmuCleanup, OrphansOfADeadOwnerAreRemovedAndLiveRunsKept) {
  ST_SKIP_WITHOUT_EMU_PRIVILEGES();
  // A live run (this process) must survive a cleanup.
  const auto live = testing::make_test_network(two_clusters(50, 1));
  const EmulationPlan& plan = live->plan();
  // An orphan: namespaces named by the scheme with no record (as after a
  // SIGKILL between creating them and... or a deleted record).
  const std::string orphan_id = make_run_id();
  const std::string orphan = run_prefix(orphan_id) + "n0";
  create_netns(orphan);
  // And a namespace that is not ours must be left alone.
  const std::string foreign = "st-test-foreign-" + make_run_id();
  create_netns(foreign);
  const CleanupReport report = cleanup_orphans();
  EXPECT_FALSE(netns_exists(orphan));
  EXPECT_TRUE(netns_exists(foreign));
  for (const auto& name : plan.namespaces()) EXPECT_TRUE(netns_exists(name)) << name;
  EXPECT_NE(std::find(report.removed_namespaces.begin(), report.removed_namespaces.end(), orphan),
            report.removed_namespaces.end());
  delete_netns(foreign);
}

}  // namespace
}  // namespace st::emu
