// The scenario files the repository ships (scenarios/): each loads and says
// what its documentation says it runs. How the loader reads and checks a
// scenario is scenario_test.cc's.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "apps/scenario.h"
#include "tests/scenario_test_util.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#ifdef ST_HAVE_SIM
#include "sim/sim_config.h"
#endif

namespace st::apps {
namespace {

namespace fs = std::filesystem;

TEST(ShippedScenarios, ShippedScenariosLoad) {
  for (const char* name : {"fluct-115mbps", "const-100mbps", "const-500mbps", "real-starlink", "real-starlink-outage"}) {
    const std::string path = std::string(ST_SOURCE_DIR) + "/scenarios/" + name + ".yaml";
    if (std::string(name).rfind("real-starlink", 0) == 0 &&
        !fs::exists(std::string(ST_SOURCE_DIR) + "/../shared/traces/real/starlink-autobahn-10min.csv"))
      continue;  // the measured trace lives outside the repository
    SCOPED_TRACE(path);
    const auto s = load_scenario(path);
    EXPECT_EQ(s.name, name);
    EXPECT_EQ(s.backend, "sim");
    EXPECT_EQ(s.total_nodes(), 2);
    ASSERT_EQ(s.systems.size(), 3u);
    EXPECT_EQ(s.systems[0].label, "stellatrain");
    EXPECT_EQ(s.systems[1].label, "ddp");
    EXPECT_EQ(s.systems[2].label, "topk-sync");
    EXPECT_EQ(s.systems[0].config.gpus_per_node, 2);
    EXPECT_EQ(s.systems[0].config.model, "cnn");
    EXPECT_EQ(s.systems[0].config.dataset, "fashion-mnist");
    EXPECT_DOUBLE_EQ(s.target_accuracy, 0.85);
    if (std::string(name) == "fluct-115mbps") {
      // The headline: the whole test set, every 2 iterations until 87%, five paired seeds.
      EXPECT_EQ(s.systems[1].config.eval_samples, 0u);
      EXPECT_EQ(s.systems[1].config.eval_interval, 2);
      EXPECT_EQ(s.systems[1].config.eval_interval_after, 25);
      EXPECT_EQ(s.report_targets, (std::vector<double>{0.80, 0.83, 0.85, 0.87}));
      EXPECT_EQ(s.seeds.size(), 5u);
    } else {
      EXPECT_EQ(s.systems[1].config.eval_samples, 5000u);
    }
    // Its replay starts 7 s before the trace's first outage (docs/sim-flow.md, "Outages").
    if (std::string(name) == "real-starlink-outage") {
      EXPECT_DOUBLE_EQ(s.trace_offset_for(1), 40);
    }
    // stellatrain runs its controller by default; ddp has none to run
    EXPECT_TRUE(s.systems[0].config.options_as<train::StellaTrainOptions>().controller);
    EXPECT_FALSE(s.systems[1].config.options->controlled());
    EXPECT_EQ(s.network.wan.size(), 2u);
    const auto& wan = s.network.wan.at({0, 1});
    if (wan.trace.empty()) EXPECT_GT(wan.constant_mbps, 0);
    else EXPECT_NEAR(wan.trace.mean_mbps(), 115, 1e-3);  // the CSV keeps 3 decimals
#ifdef ST_HAVE_SIM
    ASSERT_TRUE(s.sim_compute);
    EXPECT_EQ(s.sim_compute->compute.kind, "profile");
#endif
  }
}

// The GPU scenarios load on any build (running them needs a CUDA build);
// the ns-3 one reads the shipped GPU profile, whose device it must name.
TEST(ShippedScenarios, GpuScenariosLoadWithTheShippedProfile) {
  const auto cnn = load_scenario(std::string(ST_SOURCE_DIR) + "/scenarios/gpu/cnn-2x2-cuda.yaml");
  EXPECT_EQ(cnn.backend, "real");
  for (const auto& system : cnn.systems) EXPECT_EQ(system.config.compute_device, "cuda");
  const auto sim = load_scenario(std::string(ST_SOURCE_DIR) + "/scenarios/gpu/resnet18-fmnist-fluct-115.yaml");
  EXPECT_EQ(sim.backend, "sim");
  ASSERT_EQ(sim.systems.size(), 3u);
  for (const auto& system : sim.systems) {
    EXPECT_EQ(system.config.compute_device, "cuda");
    EXPECT_EQ(system.config.model, "resnet18");
    EXPECT_DOUBLE_EQ(system.config.time_budget_s, 400);  // keeps ddp's ns-3 run to minutes
  }
#ifdef ST_HAVE_SIM
  ASSERT_TRUE(sim.sim_compute);
  EXPECT_EQ(sim.sim_compute->compute.kind, "profile");
  EXPECT_NE(sim.sim_compute->compute.profile_path.find("gpu-measured.yaml"), std::string::npos);
#endif
}

// The paper's regime with accuracy (docs/paper-tta.md): both workloads at
// the three links load, with the controller filling the link, ddp, and
// three paired seeds; the CNN's also with the controller's paper rule,
// fixed densities and every baseline the table is held against.
TEST(ShippedScenarios, PaperTtaScenariosLoad) {
  for (const char* workload : {"cnn-h100", "resnet18-h100"}) {
    for (const char* link : {"fluct-115", "const-100", "const-500"}) {
      const std::string name = std::string(workload) + "-" + link;
      SCOPED_TRACE(name);
      const auto s = paper_tta_scenario(name);
      EXPECT_EQ(s.name, name);
      EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2, 3}));
      std::vector<std::string> labels;
      for (const auto& system : s.systems) labels.push_back(system.label);
      ASSERT_GE(labels.size(), 2u);
      EXPECT_EQ(labels[0], "stellatrain-fill-80");
      EXPECT_EQ(labels[1], "ddp");
      const auto& fill = s.systems[0].config.options_as<train::StellaTrainOptions>();
      EXPECT_TRUE(fill.controller);
      EXPECT_DOUBLE_EQ(fill.control.link_utilization, 0.8);
      EXPECT_DOUBLE_EQ(s.target_accuracy, 0.85);
      for (const auto& system : s.systems)
        EXPECT_EQ(system.config.compute_device, std::string(workload) == "cnn-h100" ? "cpu" : "cuda");
      if (std::string(workload) == "cnn-h100") {
        for (const char* label : {"stellatrain", "fixed-0.03", "fixed-0.1", "topk-sync", "ddp-powersgd",
                                  "local-sgd", "cloudless-ma"})
          EXPECT_NE(std::find(labels.begin(), labels.end(), label), labels.end()) << label;
      }
    }
  }
}

// `s` is `base` under another name (base's + `suffix`) with the same seeds,
// targets (the main one and those reported) and WAN.
void expect_variant_of(const Scenario& s, const Scenario& base, const std::string& suffix) {
  EXPECT_EQ(s.name, base.name + suffix);
  EXPECT_EQ(s.seeds, base.seeds);
  EXPECT_EQ(s.target_accuracy, base.target_accuracy);
  EXPECT_EQ(s.report_targets, base.report_targets);
  expect_same_wan(s, base);
}

// The convergence variants run the same workload and link as their
// cnn-h100-<link>.yaml: only the systems differ.
TEST(ShippedScenarios, PaperTtaConvergenceScenariosMatchTheirWorkload) {
  for (const char* link : {"fluct-115", "const-100", "const-500"}) {
    SCOPED_TRACE(link);
    const std::string base_name = std::string("cnn-h100-") + link;
    const auto base = paper_tta_scenario(base_name);
    const auto s = paper_tta_scenario(base_name + "-convergence");
    expect_variant_of(s, base, "-convergence");
    // 500 Mbps adds warmup-fixed-0.2, checked below.
    ASSERT_EQ(s.systems.size(), std::string(link) == "const-500" ? 17u : 16u);
    EXPECT_EQ(system_named(s, "ddp").config.lr, system_named(base, "ddp").config.lr);
    const auto& fill_80 = system_named(base, "stellatrain-fill-80");
    // Each variant is the base's stellatrain-fill-80 but for what its label names.
    const std::vector<std::tuple<std::string, double, bool, bool, double, int>> variants = {
        // label, link_utilization, warm-up, momentum correction, sparsity_cost, slow_start_ticks
        {"warmup", 0.8, true, false, 0, 0},
        {"momentum-correction", 0.8, false, true, 0, 0},
        {"warmup-momentum-correction", 0.8, true, true, 0, 0},
        {"warmup-fill-0.2", 0.2, true, false, 0, 0},
        {"fill-0.2", 0.2, false, false, 0, 0},
        {"soonest", 0, false, false, 0.15, 0},
        {"warmup-soonest", 0, true, false, 0.15, 0},
        {"soonest-slow-start", 0, false, false, 0.15, 1},
        {"warmup-soonest-tick-0.25", 0, true, false, 0.15, 0},
        {"warmup-soonest-early", 0, true, false, 0.15, 0},
        {"warmup-soonest-early-probes", 0, true, false, 0.15, 0},
        {"warmup-soonest-probes", 0, true, false, 0.15, 0},
        {"warmup-fill-0.95-probes", 0.95, true, false, 0, 0},
        {"warmup-fill-0.95-drain", 0.95, true, false, 0, 0}};
    for (const auto& [label, utilization, warmup, node_momentum, sparsity_cost, slow_start_ticks] : variants) {
      SCOPED_TRACE(label);
      const auto& system = system_named(s, label);
      const auto& o = system.config.options_as<train::StellaTrainOptions>();
      const auto& f = fill_80.config.options_as<train::StellaTrainOptions>();
      EXPECT_TRUE(o.controller);
      EXPECT_DOUBLE_EQ(o.control.link_utilization, utilization);
      EXPECT_DOUBLE_EQ(o.control.sparsity_cost, sparsity_cost);
      EXPECT_EQ(o.control.estimator.slow_start_ticks, slow_start_ticks);
      EXPECT_DOUBLE_EQ(o.control.interval_s, label == "warmup-soonest-tick-0.25" ? 0.25 : f.control.interval_s);
      const bool early = label.rfind("warmup-soonest-early", 0) == 0;
      EXPECT_EQ(o.control.early_ticks, early ? 4 : f.control.early_ticks);
      const bool probes = label == "warmup-soonest-probes" || label == "warmup-soonest-early-probes" ||
                          label.rfind("warmup-fill-0.95", 0) == 0;
      EXPECT_EQ(o.control.probe_every_iteration, probes);
      EXPECT_EQ(o.control.drain_every_ticks, label == "warmup-fill-0.95-drain" ? 3 : 0);
      EXPECT_EQ(o.control.drain_iterations, f.control.drain_iterations);
      EXPECT_DOUBLE_EQ(o.control.estimator.probe_growth, f.control.estimator.probe_growth);
      EXPECT_DOUBLE_EQ(system.config.lr, fill_80.config.lr);
      EXPECT_EQ(o.warmup.on(), warmup);
      EXPECT_EQ(o.momentum_at == "node", node_momentum);
      EXPECT_EQ(o.compensation, f.compensation);
    }
    // The warm-up alone, at the base file's fixed-0.03 but for the warm-up.
    const auto& fixed = system_named(base, "fixed-0.03");
    const auto& alone_system = system_named(s, "warmup-fixed-0.03");
    const auto& alone = alone_system.config.options_as<train::StellaTrainOptions>();
    const auto& base_fixed = fixed.config.options_as<train::StellaTrainOptions>();
    EXPECT_FALSE(alone.controller);
    EXPECT_DOUBLE_EQ(alone.density, base_fixed.density);
    EXPECT_EQ(alone.compensation, base_fixed.compensation);
    EXPECT_EQ(alone_system.config.lr, fixed.config.lr);
    EXPECT_TRUE(alone.warmup.on());
    if (std::string(link) != "const-500") continue;
    // warmup-fixed-0.03 but for the density: the rule's density held fixed.
    const auto& held_system = system_named(s, "warmup-fixed-0.2");
    const auto& held = held_system.config.options_as<train::StellaTrainOptions>();
    EXPECT_FALSE(held.controller);
    EXPECT_DOUBLE_EQ(held.density, 0.2);
    EXPECT_EQ(held.compensation, alone.compensation);
    EXPECT_EQ(held.fp16_values, alone.fp16_values);
    EXPECT_EQ(held_system.config.lr, alone_system.config.lr);
    EXPECT_EQ(held.warmup.iterations, alone.warmup.iterations);
    EXPECT_DOUBLE_EQ(held.warmup.start, alone.warmup.start);
  }
}

// `system` trains the same model on the same data for as long as `like`,
// evaluated on the test set at the same interval.
void expect_tested_like(const ScenarioSystem& system, const train::TrainConfig& like) {
  EXPECT_EQ(system.config.model, like.model);
  EXPECT_EQ(system.config.dataset, like.dataset);
  EXPECT_EQ(system.config.iterations, like.iterations);
  EXPECT_EQ(system.config.evaluate_on, "test");
  EXPECT_EQ(system.config.eval_interval, like.eval_interval);
}

// `label` is the file's system `from` at `density`, nothing else changed.
void expect_fixed_at(const Scenario& s, const std::string& from, const std::string& label, double density) {
  SCOPED_TRACE(label);
  const auto& system = system_named(s, label);
  auto expected = system_named(s, from).config.options->to_json();
  expected["density"] = density;
  EXPECT_EQ(system.config.options->to_json(), expected);
  EXPECT_EQ(system.config.lr, system_named(s, from).config.lr);
  EXPECT_FALSE(system.config.options_as<train::StellaTrainOptions>().controller);
}

// The label-skewed scenarios are their link's base scenario with the data
// placed by class (label_skew 1) and nothing else changed: each system is
// the base's (or, for the rule and its early-tick variant, the convergence
// file's) as it is.
TEST(ShippedScenarios, PaperTtaLabelSkewScenariosDifferOnlyInWhereTheDataLives) {
  for (const char* link : {"fluct-115", "const-100", "const-500"}) {
    SCOPED_TRACE(link);
    const std::string base_name = std::string("cnn-h100-") + link;
    const auto base = paper_tta_scenario(base_name);
    const auto convergence = paper_tta_scenario(base_name + "-convergence");
    const auto s = paper_tta_scenario(base_name + "-label-skew");
    expect_variant_of(s, base, "-label-skew");
    for (const auto& system : base.systems) EXPECT_EQ(system.config.label_skew, 0);
    for (const auto& system : s.systems) {
      EXPECT_EQ(system.config.label_skew, 1) << system.label;
      EXPECT_EQ(system.config.dataset, "fashion-mnist");
      expect_tested_like(system, system_named(base, "ddp").config);
    }
    for (const char* label : {"ddp", "fixed-0.1", "topk-sync", "ddp-powersgd", "local-sgd", "cloudless-ma"})
      expect_same_system(system_named(s, label), system_named(base, label));
    for (const char* label : {"warmup-soonest", "warmup-soonest-early-probes"})
      expect_same_system(system_named(s, label), system_named(convergence, label));
    expect_fixed_at(s, "fixed-0.1", "fixed-0.3", 0.3);
    // The clipped variant is held to fixed densities clipped alike: each is
    // its unclipped fixed density plus the variant's clip_norm, nothing else.
    for (const char* density : {"0.1", "0.3"}) {
      const auto& fixed = system_named(s, std::string("fixed-") + density);
      expect_changed_from(fixed, system_named(s, std::string("fixed-") + density + "-clip-2"),
                          [](train::StellaTrainOptions& o) { o.clip_norm = 2; });
    }
  }
  // Only at 500 Mbps: the clipped fixed densities either side of clipped 30%.
  const auto at_500 = paper_tta_scenario("cnn-h100-const-500-label-skew");
  expect_fixed_at(at_500, "fixed-0.3-clip-2", "fixed-0.2-clip-2", 0.2);
  expect_fixed_at(at_500, "fixed-0.3-clip-2", "fixed-0.5-clip-2", 0.5);
  // Only at fluct-115: fixed 10% moved a tenth either way, to measure a
  // seed's sensitivity to so small a change.
  const auto full = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  expect_fixed_at(full, "fixed-0.1", "fixed-0.09", 0.09);
  expect_fixed_at(full, "fixed-0.1", "fixed-0.11", 0.11);
}

// The 500 Mbps sensitivity file is the base file's best fixed density
// (fixed-0.3) and that system a tenth lower and higher, on the base's
// workload, link, evaluation and budget.
TEST(ShippedScenarios, PaperTtaSensitivityScenarioIsTheBestFixedDensityAndItsNeighbours) {
  const auto base = paper_tta_scenario("cnn-h100-const-500");
  const auto s = paper_tta_scenario("cnn-h100-const-500-sensitivity");
  expect_variant_of(s, base, "-sensitivity");
  ASSERT_EQ(s.systems.size(), 3u);
  expect_same_system(system_named(s, "fixed-0.3"), system_named(base, "fixed-0.3"));
  for (const auto& system : s.systems) {
    SCOPED_TRACE(system.label);
    const auto& same = system_named(base, "fixed-0.3").config;
    EXPECT_EQ(system.config.label_skew, same.label_skew);
    expect_tested_like(system, same);
  }
  expect_fixed_at(s, "fixed-0.3", "fixed-0.27", 0.27);
  expect_fixed_at(s, "fixed-0.3", "fixed-0.33", 0.33);
}

// The half-skewed file is the full-skew fluct-115 file at label_skew 0.5,
// without its validation-only tuning system, its two sensitivity
// densities (fixed-0.09, fixed-0.11) and the clipped systems (the variant
// and fixed 10% and 30%, measured at full skew only): only where the data
// lives differs.
TEST(ShippedScenarios, PaperTtaHalfSkewScenarioIsTheFullSkewAtHalf) {
  const auto full = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  const auto half = paper_tta_scenario("cnn-h100-fluct-115-label-skew-half");
  expect_variant_of(half, full, "-half");
  ASSERT_EQ(half.systems.size() + 6, full.systems.size());
  for (const auto& system : half.systems) {
    SCOPED_TRACE(system.label);
    EXPECT_EQ(system.config.label_skew, 0.5);
    const auto& same = system_named(full, system.label);
    EXPECT_EQ(same.config.label_skew, 1);
    expect_same_system(system, same);
    expect_tested_like(system, same.config);
  }
}

// A tuning file for the skewed placement: the skewed file's target and
// WAN, four systems on its placement, each judged on the validation set
// and evaluated every 5 iterations to the end.
void expect_skew_tuning_on_validation(const Scenario& tune, const Scenario& skew, const std::vector<uint64_t>& seeds,
                                      size_t systems = 4) {
  EXPECT_EQ(tune.target_accuracy, skew.target_accuracy);
  expect_same_wan(tune, skew);
  EXPECT_EQ(tune.seeds, seeds);
  ASSERT_EQ(tune.systems.size(), systems);
  for (const auto& system : tune.systems) {
    SCOPED_TRACE(system.label);
    EXPECT_EQ(system.config.evaluate_on, "validation");
    EXPECT_EQ(system.config.label_skew, 1);
    EXPECT_EQ(system.config.eval_interval, 5);
    EXPECT_EQ(system.config.eval_interval_after, 0);  // every 5 iterations to the end
    const auto& like = system_named(skew, "ddp").config;
    EXPECT_EQ(system.config.model, like.model);
    EXPECT_EQ(system.config.dataset, like.dataset);
    EXPECT_EQ(system.config.iterations, like.iterations);
  }
}

// The convergence changes for the skewed placement are judged on its
// validation set, each the skewed file's warmup-soonest but for the change
// its label names, evaluated every 5 iterations to the end.
TEST(ShippedScenarios, PaperTtaSkewConvergenceTuningChangesOneThingEach) {
  const auto skew = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  const auto tune = paper_tta_scenario("cnn-h100-fluct-115-label-skew-tune-convergence");
  ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(tune, skew, {1, 2}));
  expect_same_system(system_named(tune, "ddp"), system_named(skew, "ddp"));
  const auto& base = system_named(skew, "warmup-soonest");
  expect_same_system(system_named(tune, "warmup-soonest"), base);
  expect_changed_from(base, system_named(tune, "warmup-100-soonest"),
                      [](train::StellaTrainOptions& o) { o.warmup.iterations = 100; });
  expect_changed_from(base, system_named(tune, "warmup-soonest-exact-momentum"),
                      [](train::StellaTrainOptions& o) { o.lazy_momentum = "exact"; });
}

// The density floors for the skewed placement at fluct-115 are judged on
// its validation set: each is the skewed file's picked variant but for the
// controller's min_density its label names, beside ddp and fixed 10%.
TEST(ShippedScenarios, PaperTtaSkewFloorTuningChangesOnlyTheFloor) {
  const auto skew = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  const auto tune = paper_tta_scenario("cnn-h100-fluct-115-label-skew-tune-floor");
  ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(tune, skew, {1, 2, 3, 4}, 5));
  expect_same_system(system_named(tune, "ddp"), system_named(skew, "ddp"));
  expect_same_system(system_named(tune, "fixed-0.1"), system_named(skew, "fixed-0.1"));
  const auto& base = system_named(skew, "warmup-soonest-early-probes");
  expect_same_system(system_named(tune, "warmup-soonest-early-probes"), base);
  for (const auto& [suffix, floor] : {std::pair{"0.05", 0.05}, std::pair{"0.08", 0.08}}) {
    expect_changed_from(base, system_named(tune, std::string("warmup-soonest-early-probes-floor-") + suffix),
                        [floor = floor](train::StellaTrainOptions& o) { o.control.min_density = floor; });
  }
}

// Local gradient clipping for the skewed placement at fluct-115 is judged
// on its validation set: each is the skewed file's picked variant but for
// the clip_norm its label names, beside ddp.
TEST(ShippedScenarios, PaperTtaSkewClippingTuningChangesOnlyTheClipNorm) {
  const auto skew = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  const auto tune = paper_tta_scenario("cnn-h100-fluct-115-label-skew-tune-clipping");
  ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(tune, skew, {1, 2, 3, 4}, 7));
  expect_same_system(system_named(tune, "ddp"), system_named(skew, "ddp"));
  const auto& base = system_named(skew, "warmup-soonest-early-probes");
  expect_same_system(system_named(tune, "warmup-soonest-early-probes"), base);
  for (const auto& [suffix, norm] : {std::pair{"0.5", 0.5}, std::pair{"1", 1.0}, std::pair{"2", 2.0},
                                     std::pair{"3", 3.0}, std::pair{"4", 4.0}}) {
    expect_changed_from(base, system_named(tune, std::string("warmup-soonest-early-probes-clip-") + suffix),
                        [norm = norm](train::StellaTrainOptions& o) { o.clip_norm = norm; });
  }
  // The norm picked there is the test file's clipped variant.
  expect_changed_from(base, system_named(skew, "warmup-soonest-early-probes-clip-2"),
                      [](train::StellaTrainOptions& o) { o.clip_norm = 2; });
}

// sparsity_cost's fit with clipping is made on the skewed placement's
// validation set, as its fit without: the skewed file's warmup-fixed-0.1
// as it is, then at each density of that fit with the test files' clip_norm.
TEST(ShippedScenarios, PaperTtaSkewSparsityCostWithClippingChangesDensityAndNorm) {
  const auto skew = paper_tta_scenario("cnn-h100-fluct-115-label-skew");
  const auto tune = paper_tta_scenario("cnn-h100-fluct-115-label-skew-tune-sparsity-cost-clipping");
  ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(tune, skew, {1, 2}, 8));
  const auto& base = system_named(skew, "warmup-fixed-0.1");
  expect_same_system(system_named(tune, "warmup-fixed-0.1"), base);
  // The fit's check: the test files' clipped variant, and with the refit constant.
  const auto& clipped = system_named(skew, "warmup-soonest-early-probes-clip-2");
  expect_same_system(system_named(tune, "warmup-soonest-early-probes-clip-2"), clipped);
  expect_changed_from(clipped, system_named(tune, "warmup-soonest-early-probes-clip-2-cost-0.223"),
                      [](train::StellaTrainOptions& o) { o.control.sparsity_cost = 0.223; });
  for (const auto& [suffix, density] : {std::pair{"0.01", 0.01}, std::pair{"0.03", 0.03}, std::pair{"0.1", 0.1},
                                        std::pair{"0.3", 0.3}, std::pair{"0.5", 0.5}}) {
    expect_changed_from(base, system_named(tune, std::string("warmup-fixed-") + suffix + "-clip-2"),
                        [density = density](train::StellaTrainOptions& o) {
                          o.density = density;
                          o.clip_norm = 2;
                        });
  }
}

// The norm picked at fluct-115 is checked, not tuned, at the constant
// links on their validation sets: the skewed file's picked variant with
// and without it; the test files hold the clipped variant too.
TEST(ShippedScenarios, PaperTtaSkewClippingCheckAtTheConstantLinksUsesTheFluctPick) {
  for (const std::string link : {"const-100", "const-500"}) {
    SCOPED_TRACE(link);
    const auto skew = paper_tta_scenario("cnn-h100-" + link + "-label-skew");
    const auto check = paper_tta_scenario("cnn-h100-" + link + "-label-skew-check-clipping");
    ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(check, skew, {1, 2, 3, 4}, 3));
    const auto& base = system_named(skew, "warmup-soonest-early-probes");
    expect_same_system(system_named(check, "warmup-soonest-early-probes"), base);
    expect_changed_from(base, system_named(check, "warmup-soonest-early-probes-clip-2"),
                        [](train::StellaTrainOptions& o) { o.clip_norm = 2; });
    // sparsity_cost refitted with clipping at fluct-115, checked here too.
    expect_changed_from(base, system_named(check, "warmup-soonest-early-probes-clip-2-cost-0.223"),
                        [](train::StellaTrainOptions& o) {
                          o.clip_norm = 2;
                          o.control.sparsity_cost = 0.223;
                        });
    // The test file holds the same clipped variant.
    expect_changed_from(base, system_named(skew, "warmup-soonest-early-probes-clip-2"),
                        [](train::StellaTrainOptions& o) { o.clip_norm = 2; });
  }
}

// The density warm-up lengths for the skewed placement at 100 Mbps are
// judged on its validation set: each is the skewed file's picked variant
// but for the warm-up its label names, beside the file's fixed 10%.
TEST(ShippedScenarios, PaperTtaSkewWarmupTuningChangesOnlyTheWarmup) {
  const auto skew = paper_tta_scenario("cnn-h100-const-100-label-skew");
  const auto tune = paper_tta_scenario("cnn-h100-const-100-label-skew-tune-warmup");
  ASSERT_NO_FATAL_FAILURE(expect_skew_tuning_on_validation(tune, skew, {1, 2, 3, 4}));
  expect_same_system(system_named(tune, "fixed-0.1"), system_named(skew, "fixed-0.1"));
  const auto& base = system_named(skew, "warmup-soonest-early-probes");
  expect_same_system(system_named(tune, "warmup-soonest-early-probes"), base);
  expect_changed_from(base, system_named(tune, "warmup-25-soonest-early-probes"),
                      [](train::StellaTrainOptions& o) { o.warmup.iterations = 25; });
  expect_changed_from(base, system_named(tune, "soonest-early-probes"),
                      [](train::StellaTrainOptions& o) { o.warmup = {}; });
}

// The tuning scenarios decide on the validation set only, and the rule the
// convergence scenarios test uses the constant the tuning file states.
TEST(ShippedScenarios, PaperTtaTuningScenariosDecideOnValidationData) {
  for (const char* name : {"cnn-h100-fluct-115-tune-utilization", "cnn-h100-fluct-115-tune-sparsity-cost"}) {
    SCOPED_TRACE(name);
    const auto s = paper_tta_scenario(name);
    for (const auto& system : s.systems) EXPECT_EQ(system.config.evaluate_on, "validation") << system.label;
  }
  const auto tune = paper_tta_scenario("cnn-h100-fluct-115-tune-sparsity-cost");
  int fixed = 0;
  double fitted = 0;
  for (const auto& system : tune.systems) {
    const auto& o = system.config.options_as<train::StellaTrainOptions>();
    if (!o.controller) {
      ++fixed;
      EXPECT_EQ(system.label, "warmup-fixed-" + std::string(system.label.substr(13)));
    } else {
      fitted = o.control.sparsity_cost;
    }
  }
  EXPECT_EQ(fixed, 5);
  EXPECT_GT(fitted, 0);
  for (const char* link : {"fluct-115", "const-100", "const-500"}) {
    const auto s = paper_tta_scenario(std::string("cnn-h100-") + link + "-convergence");
    for (const auto& system : s.systems) {
      if (system.label.find("soonest") == std::string::npos) continue;
      EXPECT_DOUBLE_EQ(system.config.options_as<train::StellaTrainOptions>().control.sparsity_cost, fitted)
          << link << " " << system.label;
    }
  }
}

}  // namespace
}  // namespace st::apps
