// The emulator's plan (emu/emu_plan.h): names, addresses and the rules of
// what it can build. Pure: no privileges needed.
#include <gtest/gtest.h>

#include "emu/emu_plan.h"

namespace st::emu {
namespace {

net::TopologyConfig clusters(int count, int nodes_each) {
  net::TopologyConfig config;
  for (int c = 0; c < count; ++c) config.clusters.push_back({"c" + std::to_string(c), nodes_each});
  net::WanDirection direction;
  direction.constant_mbps = 100;
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b)
      if (a != b) config.wan[{a, b}] = direction;
  return config;
}

std::string plan_error(const net::TopologyConfig& config) {
  try {
    plan_emulation(config, "ab12");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(EmuPlan, RunIdsAndPrefixes) {
  const std::string id = make_run_id();
  EXPECT_TRUE(is_run_id(id));
  EXPECT_EQ(run_prefix("ab12"), "st-ab12-");
  EXPECT_EQ(run_id_of("st-ab12-n0"), "ab12");
  EXPECT_EQ(run_id_of("st-ab12-r10"), "ab12");
  EXPECT_EQ(run_id_of("st-AB12-n0"), "");
  EXPECT_EQ(run_id_of("st-ab1-n0"), "");
  EXPECT_EQ(run_id_of("st-ab12"), "");
  EXPECT_EQ(run_id_of("docker0"), "");
  EXPECT_EQ(run_id_of("st-test-foreign"), "");
  EXPECT_EQ(run_id_of("st-test-n"), "");
  EXPECT_EQ(run_id_of("st-test-n1x"), "");
}

TEST(EmuPlan, NamesAddressesAndRoutes) {
  const EmulationPlan plan = plan_emulation(clusters(2, 2), "ab12");
  ASSERT_EQ(plan.nodes.size(), 4u);
  EXPECT_EQ(plan.routers[1].netns, "st-ab12-r1");
  EXPECT_EQ(plan.routers[1].lan_prefix, "10.2.0.0/16");
  EXPECT_EQ(plan.nodes[3].netns, "st-ab12-n3");
  EXPECT_EQ(plan.nodes[3].cluster, 1);
  EXPECT_EQ(plan.nodes[3].address, "10.2.0.6");  // second /30 of cluster 1
  EXPECT_EQ(plan.nodes[3].router_address, "10.2.0.5");
  ASSERT_EQ(plan.wan.size(), 2u);
  EXPECT_EQ(plan.wan[1].name, "c1->c0");
  EXPECT_EQ(plan.wan[1].out_ifname, "st-ab12-w1-0");
  EXPECT_EQ(plan.wan[1].in_ifname, "st-ab12-v1-0");
  EXPECT_EQ(plan.wan[1].out_address, "100.64.0.5");
  EXPECT_EQ(plan.wan[1].queue_number, 1);
  EXPECT_EQ(plan.mtu, 1500);  // auto on the emulator: the veth default
  EXPECT_EQ(plan.namespaces().size(), 6u);
}

TEST(EmuPlan, InterfaceNamesFitIfnamsizAtTheLimits) {
  const EmulationPlan plan = plan_emulation(clusters(kMaxClusters, 1), "zz99");
  for (const auto& node : plan.nodes) {
    EXPECT_LE(node.ifname.size(), 15u) << node.ifname;
    EXPECT_LE(node.router_ifname.size(), 15u) << node.router_ifname;
  }
  for (const auto& d : plan.wan) {
    EXPECT_LE(d.out_ifname.size(), 15u) << d.out_ifname;
    EXPECT_LE(d.in_ifname.size(), 15u) << d.in_ifname;
  }
  net::TopologyConfig many = clusters(2, 1);
  many.clusters[1].nodes = kMaxNodes - 1;
  const EmulationPlan big = plan_emulation(many, "zz99");
  EXPECT_EQ(big.nodes.back().ifname, "st-zz99-n99999");
  EXPECT_LE(big.nodes.back().router_ifname.size(), 15u);
}

TEST(EmuPlan, WhatTheEmulatorCannotBuildIsAnErrorNamingIt) {
  EXPECT_NE(plan_error(clusters(kMaxClusters + 1, 1)).find("at most 100"), std::string::npos);
  auto config = clusters(2, 1);
  config.lan_delay_ms = 5;
  EXPECT_NE(plan_error(config).find("lan delay_ms = 5: the emulator does not add LAN delay"), std::string::npos);
  config = clusters(2, 1);
  config.wan[{0, 1}].constant_mbps = 20000;
  EXPECT_NE(plan_error(config).find("wan 'c0->c1': up to 20000 Mbps"), std::string::npos);
  config = clusters(3, 1);
  config.wan[{0, 2}].tcp = "bbr";
  EXPECT_NE(plan_error(config).find("one congestion control per node namespace"), std::string::npos);
  config = clusters(2, 2);
  config.wan[{0, 1}].tcp = "bbr";  // the LAN of cluster c0 (2 nodes) stays cubic
  EXPECT_NE(plan_error(config).find("lan tcp 'cubic' differs"), std::string::npos);
  config.lan_tcp = "bbr";
  config.wan[{1, 0}].tcp = "bbr";
  EXPECT_EQ(plan_error(config), "(no error)");
  EXPECT_EQ(plan_emulation(config, "ab12").nodes[0].tcp, "bbr");
  EXPECT_EQ(linux_tcp_name("newreno"), "reno");
  // Asymmetric delays are fine here (not on ns-3's point-to-point links).
  config = clusters(2, 1);
  config.wan[{0, 1}].delay_ms = 10;
  EXPECT_EQ(plan_error(config), "(no error)");
}

}  // namespace
}  // namespace st::emu
