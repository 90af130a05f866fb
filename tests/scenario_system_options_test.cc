// Each system's own options in a scenario file (apps/scenario.h):
// StellaTrain's presets and controller options, the local-update systems'
// options, each checked where it does not apply and where its value is
// out of range, naming the file, the key path and the line.
#include <gtest/gtest.h>

#include "apps/scenario.h"
#include "core/train/systems/local_step/local_step_options.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#include "tests/scenario_file_fixture.h"

namespace st::apps {
namespace {

// `- stellatrain` runs the variant this testbed measured best (controller,
// lookahead, fp16); `preset: paper` the paper's rule; keys beside a preset
// override it.
TEST_F(ScenarioFile, StellaTrainPresets) {
  const auto s = load_scenario(write(text({{"systems",
      "systems:\n  - stellatrain\n  - {name: stellatrain, label: paper, preset: paper}\n"
      "  - {name: stellatrain, label: paper-fp16, preset: paper, fp16: true}\n"}})));
  const auto& best = s.systems[0].config.options_as<train::StellaTrainOptions>();
  EXPECT_TRUE(best.controller);
  EXPECT_EQ(best.compensation, "lookahead");
  EXPECT_TRUE(best.fp16_values);
  EXPECT_EQ(best.preset, "measured");
  const auto& paper = s.systems[1].config.options_as<train::StellaTrainOptions>();
  EXPECT_TRUE(paper.controller);
  EXPECT_EQ(paper.compensation, "none");
  EXPECT_FALSE(paper.fp16_values);
  EXPECT_TRUE(s.systems[2].config.options_as<train::StellaTrainOptions>().fp16_values);
  EXPECT_EQ(s.systems[1].config.options->to_json().at("preset"), "paper");
  expect_errors({{text({{"systems", "systems:\n  - {name: stellatrain, preset: fastest}\n  - ddp\n"}}),
                  "systems[0].preset (line 10): 'fastest' is not one of"}},
                error_of);
}

// `controller: {preset: NAME}` is the named set of options
// (core/control/controller_presets.h); the keys beside it win, written
// before or after it; an unknown name is an error naming the known ones.
TEST_F(ScenarioFile, ControllerPresetsAreNamedSetsTheKeysBesideOverride) {
  const auto s = load_scenario(write(text({{"systems",
      "systems:\n  - {name: stellatrain, label: busy, controller: {preset: keep-busy}}\n"
      "  - {name: stellatrain, label: busy-90, controller: {link_utilization: 0.9, preset: keep-busy, early_ticks: 1}}\n"
      "  - {name: stellatrain, label: bound, controller: {preset: bytes-bound}}\n"
      "  - {name: stellatrain, label: written-out, controller: {link_utilization: 0.85, probe_growth: 2, "
      "probe_every_iteration: true, early_ticks: 4, window_includes_load: true, decrease_once: true, "
      "resume_at_delivered: true, probe_ceiling: 1.15, probe_at_start: true, pair_by_iteration: true, "
      "interval_s: 0.5, early_density_switch: true, fresh_overruns: true, after_previous_iteration: true, "
      "safety: 1.0, wait_decrease: 0.5, drain_at_delivered: true}}\n"
      "  - {name: stellatrain, label: bound-written-out, controller: {window_includes_load: true, decrease_once: true, "
      "resume_at_delivered: true, probe_ceiling: 1.15, probe_at_start: true, pair_by_iteration: true, "
      "interval_s: 0.5, early_density_switch: true, fresh_overruns: true, after_previous_iteration: true, "
      "safety: 1.0, wait_decrease: 0.5, drain_at_delivered: true}}\n"
      "  - {name: stellatrain, label: bound-by-lag, controller: {preset: bytes-bound, pair_by_iteration: false, "
      "skip_peer_lag: true}}\n"}})));
  const auto& busy = s.systems[0].config.options_as<train::StellaTrainOptions>();
  EXPECT_TRUE(busy.controller);
  EXPECT_EQ(busy.to_json(), s.systems[3].config.options->to_json()) << "the preset is its keys written out";
  const auto& busy_90 = s.systems[1].config.options_as<train::StellaTrainOptions>();
  EXPECT_DOUBLE_EQ(busy_90.control.link_utilization, 0.9) << "a key written before the preset still wins";
  EXPECT_EQ(busy_90.control.early_ticks, 1);
  EXPECT_TRUE(busy_90.control.probe_every_iteration);
  const auto& bound = s.systems[2].config.options_as<train::StellaTrainOptions>();
  EXPECT_TRUE(bound.control.estimator.pair_by_iteration);
  EXPECT_DOUBLE_EQ(bound.control.link_utilization, 0) << "bytes-bound keeps the paper's density rule";
  EXPECT_EQ(bound.control.early_ticks, 1);
  EXPECT_EQ(bound.to_json(), s.systems[4].config.options->to_json()) << "bytes-bound is its 13 keys written out";
  const auto& by_lag = s.systems[5].config.options_as<train::StellaTrainOptions>().control.estimator;
  EXPECT_FALSE(by_lag.pair_by_iteration) << "a preset's switch turned off beside it";
  EXPECT_TRUE(by_lag.skip_peer_lag);
  expect_errors(
      {{text({{"systems", "systems:\n  - {name: stellatrain, controller: {preset: fastest}}\n  - ddp\n"}}),
        "systems[0].controller.preset (line 10): 'fastest' is not one of: bytes-bound, keep-busy"},
       {text({{"systems", "systems:\n  - {name: stellatrain, controller: {preset: keep-busy, sparsity_cost: 0.2}}\n"
                          "  - ddp\n"}}),
        "systems[0].controller.sparsity_cost (line 10): and link_utilization are two density rules; set one; the "
        "preset sets link_utilization: write `link_utilization: 0` beside it to turn it off"},
       // An option that excludes one the preset set: the error names the
       // key the file wrote, and the preset's.
       {text({{"systems", "systems:\n  - {name: stellatrain, controller: {preset: bytes-bound, skip_peer_lag: true}}\n"
                          "  - ddp\n"}}),
        "systems[0].controller.skip_peer_lag (line 10): pair_by_iteration replaces skip_peer_lag and "
        "skip_early_arrivals; set one; the preset sets pair_by_iteration: write `pair_by_iteration: false` beside it"},
       {text({{"systems", "systems:\n  - {name: stellatrain, controller: {preset: keep-busy, samples_by_plan: true}}\n"
                          "  - ddp\n"}}),
        "systems[0].controller.samples_by_plan (line 10): replaces fresh_overruns; set one; the preset sets "
        "fresh_overruns: write `fresh_overruns: false` beside it"}},
      error_of);
}

// `budget` in a system entry replaces the scenario's for that system alone.
TEST_F(ScenarioFile, ASystemMayHaveABudgetOfItsOwn) {
  const auto s = load_scenario(write(text({{"systems",
      "systems:\n  - stellatrain\n  - {name: ddp, budget: {iterations: 3}}\n"
      "  - {name: ddp, label: timed, budget: {time_s: 2.5}}\n"}})));
  EXPECT_EQ(s.systems[0].config.iterations, 10) << "the scenario's budget";
  EXPECT_EQ(s.systems[1].config.iterations, 3);
  EXPECT_DOUBLE_EQ(s.systems[1].config.time_budget_s, 0);
  EXPECT_DOUBLE_EQ(s.systems[2].config.time_budget_s, 2.5);
  expect_errors({{text({{"systems", "systems:\n  - {name: ddp, budget: {}}\n  - stellatrain\n"}}),
                  "systems[0].budget (line 10): give iterations, time_s or both"},
                 {text({{"systems", "systems:\n  - {name: ddp, budget: {iterations: 0}}\n  - stellatrain\n"}}),
                  "systems[0].budget.iterations (line 10)"}},
                error_of);
}

TEST_F(ScenarioFile, ControllerOptionsAreChecked) {
  expect_errors(
      {
          {text({{"systems", "systems:\n  - {name: ddp, controller: off}\n  - stellatrain\n"}}),
           "systems[0].controller (line 10): only applies to stellatrain (not ddp)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: maybe}\n  - ddp\n"}}),
           "systems[0].controller (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {min_density: 0.2, max_density: 0.1}}\n  - ddp\n"}}),
           "systems[0].controller.max_density (line 10): is below min_density 0.2"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {interval: 1}}\n  - ddp\n"}}),
           "systems[0].controller.interval"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {link_utilization: 1}}\n  - ddp\n"}}),
           "systems[0].controller.link_utilization (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {sparsity_cost: -0.1}}\n  - ddp\n"}}),
           "systems[0].controller.sparsity_cost (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {drain_iterations: 0}}\n  - ddp\n"}}),
           "systems[0].controller.drain_iterations (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {drain_every_ticks: 1.5}}\n  - ddp\n"}}),
           "systems[0].controller.drain_every_ticks (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {probe_ceiling: 0.9}}\n  - ddp\n"}}),
           "systems[0].controller.probe_ceiling (line 10): 0.9 is out of range"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {resume_at_delivered: 2}}\n  - ddp\n"}}),
           "systems[0].controller.resume_at_delivered (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {probe_at_start: yes please}}\n  - ddp\n"}}),
           "systems[0].controller.probe_at_start (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {skip_peer_lag: sometimes}}\n  - ddp\n"}}),
           "systems[0].controller.skip_peer_lag (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {skip_early_arrivals: 2}}\n  - ddp\n"}}),
           "systems[0].controller.skip_early_arrivals (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {pair_by_iteration: yes please}}\n  - ddp\n"}}),
           "systems[0].controller.pair_by_iteration (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {early_density_switch: soon}}\n  - ddp\n"}}),
           "systems[0].controller.early_density_switch (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {fresh_overruns: 3}}\n  - ddp\n"}}),
           "systems[0].controller.fresh_overruns (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {samples_by_plan: 1}}\n  - ddp\n"}}),
           "systems[0].controller.samples_by_plan (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {after_previous_iteration: 0}}\n  - ddp\n"}}),
           "systems[0].controller.after_previous_iteration (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {wait_decrease: 0}}\n  - ddp\n"}}),
           "systems[0].controller.wait_decrease (line 10): 0 is out of range"},
          {text({{"systems", "systems:\n  - {name: stellatrain, controller: {drain_at_delivered: 1}}\n  - ddp\n"}}),
           "systems[0].controller.drain_at_delivered (line 10)"},
          {text({{"systems",
                  "systems:\n  - {name: stellatrain, controller: {fresh_overruns: true, samples_by_plan: true}}\n  - ddp\n"}}),
           "systems[0].controller.samples_by_plan (line 10): replaces fresh_overruns; set one"},
          {text({{"systems",
                  "systems:\n  - {name: stellatrain, controller: {skip_peer_lag: true, pair_by_iteration: true}}\n  - ddp\n"}}),
           "systems[0].controller.pair_by_iteration (line 10): replaces skip_peer_lag and skip_early_arrivals; set one"},
          {text({{"systems",
                  "systems:\n  - {name: stellatrain, controller: {link_utilization: 0.2, sparsity_cost: 0.3}}\n  - ddp\n"}}),
           "systems[0].controller.sparsity_cost (line 10): and link_utilization are two density rules; set one"},
          {text({{"systems", "systems:\n  - {name: stellatrain, compensation: guess}\n  - ddp\n"}}),
           "systems[0].compensation (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, density_warmup: {iterations: 10, start: 2}}\n  - ddp\n"}}),
           "systems[0].density_warmup.start (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, density_warmup: {length: 10}}\n  - ddp\n"}}),
           "systems[0].density_warmup.length"},
          {text({{"systems", "systems:\n  - {name: ddp, density_warmup: {iterations: 10}}\n  - stellatrain\n"}}),
           "systems[0].density_warmup (line 10): only applies to stellatrain (not ddp)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, clip_norm: -1}\n  - ddp\n"}}),
           "systems[0].clip_norm (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, clip_norm: 1.0e-9}\n  - ddp\n"}}),
           "systems[0] (line 10): train config: clip_norm must be 0 (off) or at least 1e-6"},
          {text({{"systems", "systems:\n  - {name: stellatrain, dense_up_to: -1}\n  - ddp\n"}}),
           "systems[0].dense_up_to (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, dense_up_to: 2.5}\n  - ddp\n"}}),
           "systems[0].dense_up_to (line 10)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, dense_up_to: 512, momentum_at: node, "
                             "momentum_masking: true}\n  - ddp\n"}}),
           "systems[0] (line 10): train config: dense_up_to with momentum_masking would zero a whole tensor's "
           "velocity every step; turn one off"},
          {text({{"systems", "systems:\n  - {name: ddp, dense_up_to: 512}\n  - stellatrain\n"}}),
           "systems[0].dense_up_to (line 10): only applies to stellatrain (not ddp)"},
      },
      error_of);
  const auto s = load_scenario(write(text({{"systems",
      "systems:\n  - {name: stellatrain, controller: {interval_s: 0.5, max_density: 0.3, batch: false, link_utilization: 0.8, "
      "probe_growth: 2, slow_start_ticks: 1}, density_warmup: {iterations: 40, start: 0.2}}\n"
      "  - {name: stellatrain, label: fixed, controller: off, clip_norm: 2.5, dense_up_to: 512, optimizer: {lr: 0.1, warmup: 20}}\n"
      "  - {name: stellatrain, label: soonest, controller: {sparsity_cost: 0.27, probe_every_iteration: true, "
      "drain_every_ticks: 5, drain_iterations: 3, probe_at_start: true}}\n"}})));
  const auto& controlled = s.systems[0].config.options_as<train::StellaTrainOptions>();
  EXPECT_TRUE(controlled.controller);
  EXPECT_DOUBLE_EQ(controlled.control.interval_s, 0.5);
  EXPECT_DOUBLE_EQ(controlled.control.max_density, 0.3);
  EXPECT_FALSE(controlled.control.adapt_batch);
  EXPECT_DOUBLE_EQ(controlled.control.link_utilization, 0.8);
  EXPECT_DOUBLE_EQ(controlled.control.estimator.probe_growth, 2);
  EXPECT_EQ(controlled.control.estimator.slow_start_ticks, 1);
  EXPECT_EQ(controlled.clip_norm, 0.0);  // off unless given
  EXPECT_EQ(controlled.dense_up_to, 0);  // off unless given
  EXPECT_EQ(s.systems[1].config.options_as<train::StellaTrainOptions>().dense_up_to, 512);
  EXPECT_EQ(controlled.warmup.iterations, 40);
  EXPECT_DOUBLE_EQ(controlled.warmup.start, 0.2);
  EXPECT_FALSE(s.systems[1].config.options_as<train::StellaTrainOptions>().warmup.on());
  EXPECT_FALSE(s.systems[1].config.options_as<train::StellaTrainOptions>().controller);
  EXPECT_DOUBLE_EQ(s.systems[1].config.options_as<train::StellaTrainOptions>().clip_norm, 2.5);
  EXPECT_DOUBLE_EQ(s.systems[2].config.options_as<train::StellaTrainOptions>().control.sparsity_cost, 0.27);
  EXPECT_TRUE(s.systems[2].config.options_as<train::StellaTrainOptions>().control.probe_every_iteration);
  EXPECT_FALSE(controlled.control.probe_every_iteration);
  EXPECT_TRUE(s.systems[2].config.options_as<train::StellaTrainOptions>().control.probe_at_start);
  EXPECT_FALSE(controlled.control.probe_at_start);
  EXPECT_EQ(s.systems[2].config.options_as<train::StellaTrainOptions>().control.drain_every_ticks, 5);
  EXPECT_EQ(s.systems[2].config.options_as<train::StellaTrainOptions>().control.drain_iterations, 3);
  EXPECT_EQ(controlled.control.drain_every_ticks, 0);
  EXPECT_DOUBLE_EQ(s.systems[1].config.lr, 0.1);
  EXPECT_EQ(s.systems[1].config.warmup_iterations, 20);
}

TEST_F(ScenarioFile, LocalUpdateSystemsTakeTheirOwnOptions) {
  expect_errors(
      {
          {text({{"systems", "systems:\n  - {name: ddp, averaging_period: 4}\n  - stellatrain\n"}}),
           "systems[0].averaging_period (line 10): only applies to local-sgd and cloudless-ma (not ddp)"},
          {text({{"systems", "systems:\n  - {name: local-sgd, overlap: false}\n  - ddp\n"}}),
           "systems[0].overlap (line 10): only applies to cloudless-ma (not local-sgd)"},
          {text({{"systems", "systems:\n  - {name: cloudless-ma, accumulation_steps: 2}\n  - ddp\n"}}),
           "systems[0].accumulation_steps (line 10): only applies to cloudless-asgd-ga (not cloudless-ma)"},
          {text({{"systems", "systems:\n  - {name: cloudless-asgd-ga, max_staleness: -1}\n  - ddp\n"}}),
           "systems[0].max_staleness (line 10)"},
          {text({{"systems", "systems:\n  - {name: local-sgd, averaging_period: 0}\n  - ddp\n"}}),
           "systems[0].averaging_period (line 10)"},
      },
      error_of);
  const auto s = load_scenario(write(text({{"systems",
      "systems:\n  - {name: local-sgd, averaging_period: 4, start_iteration: 10}\n"
      "  - {name: cloudless-ma, averaging_period_s: 2.5, overlap: false}\n"
      "  - {name: cloudless-asgd-ga, accumulation_steps: 3, max_staleness: 0}\n"}})));
  const auto& local = s.systems[0].config.options_as<train::LocalSgdOptions>();
  EXPECT_EQ(local.averaging_period, 4);
  EXPECT_EQ(local.start_iteration, 10);
  const auto& ma = s.systems[1].config.options_as<train::CloudlessMaOptions>();
  EXPECT_DOUBLE_EQ(ma.averaging_period_s, 2.5);
  EXPECT_FALSE(ma.overlap);
  const auto& asgd = s.systems[2].config.options_as<train::CloudlessAsgdOptions>();
  EXPECT_EQ(asgd.accumulation_steps, 3);
  EXPECT_EQ(asgd.max_staleness, 0);
}

}  // namespace
}  // namespace st::apps
