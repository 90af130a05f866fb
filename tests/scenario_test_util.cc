// Shared by the sources of scenario_test: what two shipped scenario files
// or systems have in common (scenario_test_util.h).
#include "tests/scenario_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

namespace st::apps {

Scenario paper_scenario(const std::string& name) {
  return load_scenario(std::string(ST_SOURCE_DIR) + "/scenarios/paper/" + name + ".yaml");
}

Scenario paper_tta_scenario(const std::string& name) {
  return load_scenario(std::string(ST_SOURCE_DIR) + "/scenarios/paper-tta/" + name + ".yaml");
}

const ScenarioSystem& system_named(const Scenario& s, const std::string& label) {
  const auto it = std::find_if(s.systems.begin(), s.systems.end(),
                               [&](const ScenarioSystem& system) { return system.label == label; });
  if (it == s.systems.end()) throw std::runtime_error(s.name + " has no system " + label);
  return *it;
}

void expect_same_wan(const Scenario& s, const Scenario& base) {
  ASSERT_EQ(s.network.wan.size(), base.network.wan.size());
  for (const auto& [pair, direction] : base.network.wan) {
    const auto& mine = s.network.wan.at(pair);
    EXPECT_EQ(mine.constant_mbps, direction.constant_mbps);
    EXPECT_EQ(mine.delay_ms, direction.delay_ms);
    EXPECT_EQ(mine.trace.steps().size(), direction.trace.steps().size());
    if (!direction.trace.empty()) {
      EXPECT_EQ(mine.trace.mean_mbps(), direction.trace.mean_mbps());
    }
  }
  EXPECT_EQ(s.network.model, base.network.model);
}

void expect_same_system(const ScenarioSystem& a, const ScenarioSystem& b) {
  SCOPED_TRACE(a.label);
  EXPECT_EQ(a.config.system, b.config.system);
  EXPECT_EQ(a.config.options->to_json(), b.config.options->to_json());
  EXPECT_DOUBLE_EQ(a.config.lr, b.config.lr);
  EXPECT_DOUBLE_EQ(a.config.momentum, b.config.momentum);
}

}  // namespace st::apps
