#pragma once
// Shared by the sources of scenario_test (shipped_scenarios_test.cc,
// shipped_paper_controller_test.cc, shipped_resnet18_test.cc): loading a
// shipped scenario and what two of them, or two of their systems, have in
// common.
#include <gtest/gtest.h>

#include <string>

#include "apps/scenario.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"

namespace st::apps {

// scenarios/paper/<name>.yaml, loaded.
Scenario paper_scenario(const std::string& name);

// scenarios/paper-tta/<name>.yaml, loaded.
Scenario paper_tta_scenario(const std::string& name);

// The system labelled `label`; throws when there is none.
const ScenarioSystem& system_named(const Scenario& s, const std::string& label);

// The same WAN: every direction's rate or trace, its delay, the network model.
void expect_same_wan(const Scenario& s, const Scenario& base);

// The same run settings: system, its options and the optimizer.
void expect_same_system(const ScenarioSystem& a, const ScenarioSystem& b);

// `variant` is StellaTrain system `base` with only what `change` does to
// its options, at learning rate `lr` (the same momentum and weight decay).
template <typename Change>
void expect_changed_from_at_lr(const ScenarioSystem& base, const ScenarioSystem& variant, Change change, double lr) {
  auto expected = base.config.options_as<train::StellaTrainOptions>();
  change(expected);
  EXPECT_EQ(variant.config.options->to_json(), expected.to_json()) << variant.label;
  EXPECT_DOUBLE_EQ(variant.config.lr, lr) << variant.label;
  EXPECT_DOUBLE_EQ(variant.config.momentum, base.config.momentum) << variant.label;
  EXPECT_DOUBLE_EQ(variant.config.weight_decay, base.config.weight_decay) << variant.label;
}

// The same at `base`'s learning rate.
template <typename Change>
void expect_changed_from(const ScenarioSystem& base, const ScenarioSystem& variant, Change change) {
  expect_changed_from_at_lr(base, variant, change, base.config.lr);
}

}  // namespace st::apps
