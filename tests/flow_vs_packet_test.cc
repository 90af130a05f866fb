// The flow-level network against ns-3's packets on the shipped CNN scenarios
// (docs/sim-flow.md): the headline (scenarios/fluct-115mbps.yaml), the
// constant 100 and 500 Mbps links, and the Starlink trace
// (scenarios/real-starlink.yaml, skipped where its third-party trace is
// absent). Short runs: every system of the file at its
// first seed and trace offset, 40 iterations in timing mode (the iteration
// time does not depend on the math, tests/sim_timing_test.cc), once per
// network model; the mean iteration times must agree within 5%. The time
// to accuracy over whole runs is compared in docs/sim-flow.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "apps/backends.h"
#include "apps/scenario.h"
#include "core/train/run/trainer.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

double mean_iteration_ms(const Scenario& scenario, const ScenarioSystem& system, net::NetworkModel model) {
  auto config = system.config;
  config.seed = scenario.seeds.front();
  config.trace_offset_s = scenario.trace_offset_for(config.seed);
  config.iterations = 40;
  config.math = "timing";
  config.eval_interval = 0;
  config.eval_interval_after = 0;
  config.target_accuracy = 0;
  config.quiet = true;
  auto inputs = backend_inputs(scenario);
  inputs.network.model = model;
  return make_backend("sim", inputs)->train(config).mean_iteration_ms;
}

void expect_flow_within_five_percent(const std::string& file) {
  const auto scenario = load_scenario(file);
  for (const auto& system : scenario.systems) {
    const double packet = mean_iteration_ms(scenario, system, net::NetworkModel::packet);
    const double flow = mean_iteration_ms(scenario, system, net::NetworkModel::flow);
    std::cout << scenario.name << " " << system.label << ": packet " << packet << " ms, flow " << flow
              << " ms per iteration, flow/packet " << flow / packet << "\n";
    EXPECT_NEAR(flow / packet, 1.0, 0.05) << scenario.name << " " << system.label;
  }
}

TEST(FlowVsPacket, TheHeadlineScenarioWithinFivePercent) {
  expect_flow_within_five_percent(std::string(ST_SOURCE_DIR) + "/scenarios/fluct-115mbps.yaml");
}

TEST(FlowVsPacket, TheConstantLinkScenariosWithinFivePercent) {
  expect_flow_within_five_percent(std::string(ST_SOURCE_DIR) + "/scenarios/const-100mbps.yaml");
  expect_flow_within_five_percent(std::string(ST_SOURCE_DIR) + "/scenarios/const-500mbps.yaml");
}

TEST(FlowVsPacket, TheStarlinkScenarioWithinFivePercent) {
  const std::string file = std::string(ST_SOURCE_DIR) + "/scenarios/real-starlink.yaml";
  const auto trace = fs::path(ST_SOURCE_DIR) / "../shared/traces/real/starlink-autobahn-10min.csv";
  if (!fs::exists(trace)) GTEST_SKIP() << "no " << trace << " (third-party data; scenarios/real-starlink.yaml says how to get it)";
  expect_flow_within_five_percent(file);
}

}  // namespace
}  // namespace st::apps
