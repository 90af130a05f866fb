// Scenario files with ddp-fp16, ddp-powersgd and ddp-gloo's comm_hook: the
// keys parse into TrainConfig, belong only to their system (errors name the
// key path and line), and both new systems are accepted on the sim backend.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "apps/backends.h"
#include "apps/scenario.h"
#include "core/train/systems/ddp_gloo/ddp_gloo.h"
#include "core/train/systems/sync/sync_options.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// systems start at line 9, so systems[0] is on line 10.
std::string scenario_with(const std::string& systems) {
  return "clusters:\n  - {name: a, nodes: 1, gpus_per_node: 1}\n  - {name: b, nodes: 1, gpus_per_node: 1}\n"
         "links:\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"
         "model: mlp\ndataset: synthetic\nsystems:\n" +
         systems + "target_accuracy: 0.5\nbudget: {iterations: 10}\n";
}

std::string write(const std::string& content) {
  const auto dir = fs::path(::testing::TempDir()) / ("ddp_hooks_scenario-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto path = dir / "hooks.yaml";
  std::ofstream(path) << content;
  return path.string();
}

std::string error_of(const std::string& content) {
  try {
    load_scenario(write(content));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(DdpHooksScenario, KeysParseIntoTheConfig) {
  const auto s = load_scenario(write(scenario_with(
      "  - ddp-fp16\n"
      "  - {name: ddp-powersgd, powersgd_rank: 2, powersgd_start_iteration: 0, powersgd_error_feedback: false, "
      "powersgd_warm_start: false}\n"
      "  - {name: ddp-powersgd, label: psgd-default}\n"
      "  - {name: ddp-gloo, comm_hook: fp16}\n")));
  ASSERT_EQ(s.systems.size(), 4u);
  EXPECT_EQ(s.systems[0].config.system, "ddp-fp16");
  EXPECT_EQ(s.systems[1].config.system, "ddp-powersgd");
  const auto& p = s.systems[1].config.options_as<train::DdpPowerSgdOptions>();
  EXPECT_EQ(p.rank, 2);
  EXPECT_EQ(p.start_iteration, 0);
  EXPECT_FALSE(p.error_feedback);
  EXPECT_FALSE(p.warm_start);
  const auto& d = s.systems[2].config.options_as<train::DdpPowerSgdOptions>();
  EXPECT_EQ(d.rank, 4);
  EXPECT_EQ(d.start_iteration, 10);
  EXPECT_TRUE(d.error_feedback);
  EXPECT_TRUE(d.warm_start);
  EXPECT_EQ(s.systems[3].config.options_as<train::DdpGlooOptions>().comm_hook, "fp16");
}

TEST(DdpHooksScenario, KeysOfOtherSystemsAreErrorsNamingKeyAndLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  - {name: ddp, powersgd_rank: 2}\n", "systems[0].powersgd_rank (line 10): only applies to ddp-powersgd (not ddp)"},
      {"  - {name: ddp-fp16, powersgd_warm_start: false}\n",
       "systems[0].powersgd_warm_start (line 10): only applies to ddp-powersgd (not ddp-fp16)"},
      {"  - {name: ddp-powersgd, powersgd_rank: 0}\n", "systems[0].powersgd_rank (line 10)"},
      {"  - {name: ddp-powersgd, powersgd_start_iteration: -1}\n", "systems[0].powersgd_start_iteration (line 10)"},
      {"  - {name: ddp-fp16, comm_hook: fp16}\n", "systems[0].comm_hook (line 10): only applies to ddp-gloo"},
      {"  - {name: ddp-gloo, comm_hook: powersgd}\n", "systems[0].comm_hook (line 10)"},
  };
  for (const auto& [systems, expected] : cases) {
    const auto error = error_of(scenario_with(systems));
    EXPECT_NE(error.find(expected), std::string::npos) << systems << " gave: " << error;
  }
}

TEST(DdpHooksScenario, BothSystemsRunOnEveryBackend) {
  const auto s = load_scenario(write(scenario_with("  - ddp-fp16\n  - ddp-powersgd\n")));
#ifdef ST_HAVE_SIM_BACKEND
  EXPECT_NO_THROW(check_backend(s, "sim"));
#endif
  EXPECT_NO_THROW(check_backend(s, "real"));
}

}  // namespace
}  // namespace st::apps
