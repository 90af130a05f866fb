// The ResNet-18 scenarios of the paper's regime beside their test files
// (scenarios/paper-tta/resnet18-*.yaml): the CPU screen, the rate sweep on validation data and the controller's
// timing files each run what the test file runs but for what their labels
// name. The test files themselves are checked with the CNN's in
// shipped_scenarios_test.cc.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "apps/scenario.h"
#include "core/control/controller_presets.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#include "tests/scenario_test_util.h"
#ifdef ST_HAVE_SIM
#include "sim/compute_model.h"
#include "sim/sim_config.h"
#endif

namespace st::apps {
namespace {

const char* const kLinks[] = {"fluct-115", "const-100", "const-500"};

// The busier controller (core/control/controller_presets.h's keep-busy,
// whose options tests/scenario_system_options_test.cc compares with its
// keys written out) filling `share` of the link.
void keep_busy(train::StellaTrainOptions& o, double share) {
  control::apply_controller_preset(o.control, "keep-busy");
  o.control.link_utilization = share;
}

// The same without the preset's early ticks: the `-drain` systems.
void keep_busy_without_early_ticks(train::StellaTrainOptions& o, double share) {
  const int early_ticks = o.control.early_ticks;
  keep_busy(o, share);
  o.control.early_ticks = early_ticks;
}

// The soonest-target rule at `cost` in place of filling a share of the
// link: the `soonest-` systems, each a fill-85-busy otherwise.
void soonest_target(train::StellaTrainOptions& o, double cost) {
  o.control.link_utilization = 0;
  o.control.sparsity_cost = cost;
}

// Each entry chosen alone by `compressor` in place of thresholdv16's
// blocks, at 0.195%: about fixed 0.5%'s bytes with top-k's 2.56x per entry.
void at_the_blocks_bytes(train::StellaTrainOptions& o, const char* compressor) {
  o.compressor = compressor;
  o.density = 0.00195;
}

// Each test file's fill-85-busy is its stellatrain-fill-80 kept busy at
// 85%, at the same rate, and its soonest-0.1-busy that with the
// soonest-target rule in place of filling the link, also from 0.5%, beside
// fixed 0.5%, both also at twice the rate (the rule there at the
// sparsity_cost fitted at that rate), and fixed 0.5% at that rate with
// exact top-k at about the blocks' bytes, and the rule from there. Every
// system evaluates every 5 iterations to the end, so the monotone fit's
// reading has evaluations after its crossing at the first reading's grain.
TEST(ShippedScenarios, ResNet18TestFilesKeepTheLinkBusyAt85) {
  for (const char* link : kLinks) {
    SCOPED_TRACE(link);
    const auto s = paper_tta_scenario(std::string("resnet18-h100-") + link);
    for (const auto& system : s.systems) {
      EXPECT_EQ(system.config.eval_interval, 5) << system.label;
      EXPECT_EQ(system.config.eval_interval_after, 0) << system.label;
    }
    const auto& fill_80 = system_named(s, "stellatrain-fill-80");
    const auto& busy = system_named(s, "fill-85-busy");
    expect_changed_from(fill_80, busy, [](train::StellaTrainOptions& o) { keep_busy(o, 0.85); });
    EXPECT_DOUBLE_EQ(busy.config.momentum, fill_80.config.momentum);
    EXPECT_EQ(busy.config.compute_device, "cuda");
    // The soonest-target rule at cost 0.1 with the same estimator.
    expect_changed_from(busy, system_named(s, "soonest-0.1-busy"),
                        [](train::StellaTrainOptions& o) { soonest_target(o, 0.1); });
    expect_changed_from(busy, system_named(s, "soonest-0.1-busy-start-0.005"), [](train::StellaTrainOptions& o) {
      soonest_target(o, 0.1);
      o.density = 0.005;
    });
    // Fixed 0.5%, where that rule starts: the file's fixed 1% at 0.5%.
    expect_changed_from(system_named(s, "fixed-0.01"), system_named(s, "fixed-0.005"),
                        [](train::StellaTrainOptions& o) { o.density = 0.005; });
    // Both at twice the rate, as the CPU screen kept it for fixed 0.5%; the
    // rule there at the sparsity_cost fitted at that rate.
    const auto unchanged = [](train::StellaTrainOptions&) {};
    expect_changed_from_at_lr(system_named(s, "fixed-0.005"), system_named(s, "fixed-0.005-lr-0.2"), unchanged, 0.2);
    expect_changed_from_at_lr(system_named(s, "soonest-0.1-busy-start-0.005"),
                              system_named(s, "soonest-0.04-busy-start-0.005-lr-0.2"),
                              [](train::StellaTrainOptions& o) { o.control.sparsity_cost = 0.04; }, 0.2);
    // The CPU screen's candidate: fixed 0.5% at 0.2 with exact top-k at
    // about the blocks' bytes, as the screen has it.
    expect_changed_from(system_named(s, "fixed-0.005-lr-0.2"), system_named(s, "fixed-0.00195-topk-lr-0.2"),
                        [](train::StellaTrainOptions& o) { at_the_blocks_bytes(o, "topk"); });
    // And the rule at 0.2 from there, as the screen has it.
    expect_changed_from(system_named(s, "soonest-0.04-busy-start-0.005-lr-0.2"),
                        system_named(s, "soonest-0.04-busy-start-0.00195-topk-lr-0.2"),
                        [](train::StellaTrainOptions& o) { at_the_blocks_bytes(o, "topk"); });
  }
}

// The controller's timing files are their link's test file in timing mode
// (the same WAN, model, batch and H100 profile; no target, since no
// accuracy is measured), its controller, paper rule and fixed densities as
// there (fill-85-busy and soonest-0.1-busy too), each other system
// fill-80 or fill-85-busy but for what its
// label names, and a short ddp run as the backlogged reference.
TEST(ShippedScenarios, ResNet18ControllerFilesAreTheTestFilesInTimingMode) {
  for (const char* link : kLinks) {
    SCOPED_TRACE(link);
    const auto base = paper_tta_scenario(std::string("resnet18-h100-") + link);
    const auto s = paper_tta_scenario(std::string("resnet18-h100-") + link + "-controller");
    expect_same_wan(s, base);
    EXPECT_EQ(s.seeds, base.seeds);
    EXPECT_DOUBLE_EQ(s.target_accuracy, 0.0);
    ASSERT_EQ(s.systems.size(), 16u);
    const auto& like = base.systems.front().config;
    for (const auto& system : s.systems) {
      SCOPED_TRACE(system.label);
      EXPECT_EQ(system.config.math, "timing");
      EXPECT_EQ(system.config.model, like.model);
      EXPECT_EQ(system.config.batch_per_worker, like.batch_per_worker);
      if (system.label != "ddp") {
        EXPECT_EQ(system.config.iterations, like.iterations);
      }
    }
    // The backlogged reference: the last system, ddp, a few iterations
    // (each 1-5 s here) that outlast the others' runs.
    EXPECT_EQ(s.systems.back().label, "ddp");
    EXPECT_EQ(s.systems.back().config.system, "ddp");
    EXPECT_GE(s.systems.back().config.iterations, 6);
    EXPECT_LE(s.systems.back().config.iterations, 12);
#ifdef ST_HAVE_SIM
    ASSERT_TRUE(s.sim_compute);
    EXPECT_EQ(s.sim_compute->compute.kind, base.sim_compute->compute.kind);
    EXPECT_EQ(s.sim_compute->compute.profile_path, base.sim_compute->compute.profile_path);
#endif
    for (const char* label : {"stellatrain-fill-80", "stellatrain", "fixed-0.003", "fixed-0.01", "fixed-0.03",
                              "fill-85-busy", "soonest-0.1-busy"})
      expect_same_system(system_named(s, label), system_named(base, label));
    const auto& fill_80 = system_named(base, "stellatrain-fill-80");
    const auto probes = [](train::StellaTrainOptions& o) {
      o.control.estimator.probe_growth = 2;
      o.control.probe_every_iteration = true;
    };
    expect_changed_from(fill_80, system_named(s, "fill-80-probes"), probes);
    expect_changed_from(fill_80, system_named(s, "fill-80-early-probes"), [&](train::StellaTrainOptions& o) {
      probes(o);
      o.control.early_ticks = 4;
    });
    expect_changed_from(fill_80, system_named(s, "fill-80-drain"),
                        [](train::StellaTrainOptions& o) { keep_busy_without_early_ticks(o, 0.8); });
    for (const double share : {0.8, 0.9, 0.95}) {
      const std::string label = "fill-" + std::to_string(static_cast<int>(share * 100 + 0.5)) + "-busy";
      expect_changed_from(fill_80, system_named(s, label),
                          [share](train::StellaTrainOptions& o) { keep_busy(o, share); });
    }
    const auto& busy = system_named(base, "fill-85-busy");
    expect_changed_from(busy, system_named(s, "fill-85-busy-growth-1.1"),
                        [](train::StellaTrainOptions& o) { o.control.estimator.probe_growth = 0; });
    expect_changed_from(busy, system_named(s, "fill-85-busy-no-early"),
                        [](train::StellaTrainOptions& o) { o.control.early_ticks = 1; });
  }
}

// The top-k pricing files are the CPU screen's exact top-k at 0.195% and
// fixed 0.5% at 0.2 in timing mode on its WAN, seeds 1 and 2 to 160
// iterations, priced by the H100 profile and by what-if copies of it that
// charge top-k's selection at 2.94x and 5x thresholdv16's.
TEST(ShippedScenarios, ResNet18TopKPricingFilesAreTheScreensRunsInTimingMode) {
  const auto screen = paper_tta_scenario("resnet18-cpu-warmup-screen");
  for (const auto& [suffix, factor] : {std::pair<std::string, double>{"", 1.0}, {"-2.94x", 2.94}, {"-5x", 5.0}}) {
    SCOPED_TRACE(suffix);
    const auto s = paper_tta_scenario("resnet18-cpu-topk-pricing" + suffix);
    expect_same_wan(s, screen);
    EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2}));
    EXPECT_DOUBLE_EQ(s.target_accuracy, 0.0);
    ASSERT_EQ(s.systems.size(), 2u);
    for (const auto& system : s.systems) {
      EXPECT_EQ(system.config.math, "timing");
      EXPECT_EQ(system.config.iterations, 160);
      EXPECT_EQ(system.config.model, "resnet18");
      EXPECT_EQ(system.config.batch_per_worker, system_named(screen, system.label).config.batch_per_worker);
      expect_same_system(system, system_named(screen, system.label));
    }
#ifdef ST_HAVE_SIM
    ASSERT_TRUE(s.sim_compute);
    const auto price = [&](const std::string& compressor) {
      sim::ComputeModelConfig c = s.sim_compute->compute;
      c.model = "resnet18";
      c.compressor = compressor;
      runtime::ComputeCost task{runtime::TaskKind::kCompress, 0, 1e6, 0, -1};
      task.density = 0.00195;
      return static_cast<double>(sim::make_compute_model(c)->cost(task, runtime::Nanos::zero()).count());
    };
    // The what-if figures are written to 5 significant digits.
    EXPECT_NEAR(price("topk") / price("thresholdv16"), factor, 2e-4);
    EXPECT_NE(s.sim_compute->compute.profile_path.find(suffix.empty() ? "profiles/gpu-measured.yaml"
                                                                       : "profiles/what-if/gpu-measured-topk" + suffix),
              std::string::npos);
#endif
  }
}


// The CPU screen of the density warm-up's blow-up on ResNet-18 is
// resnet18-h100-fluct-115.yaml on the CPU for 10 iterations, evaluated on
// validation data: the same WAN, its two StellaTrain settings as there, and
// each other system one of those, or its fixed-0.03, but for what its label
// names (two are candidates screened with `--iterations 50`), the test
// file's busier controller at its rate and at half of it, its fixed-0.01
// and the same at 2%, its fixed-0.005 and fixed-0.003, the busier controller with the
// soonest-target rule at two costs and from 0.5%, and fixed 0.5% with local
// gradient clipping at three norms (one of them never binds), with its
// norm layers sent whole, without staleness and at half, twice and four
// times its rate, with momentum correction at ddp's rate and twice it and
// with exact lazy momentum at ddp's rate and half it, at twice its rate with
// the density warm-up from 2% and with the rate warmed up over 20 iterations,
// at twice its rate without staleness and with exact top-k (at 0.5% and at
// the blocks' bytes, with thresholdv there, and the rule at 0.2 from there
// with exact top-k), at full density at ddp's rate with
// and without staleness,
// the rule from 0.5% at twice its rate as the test file has
// it and at the cost fitted at that rate, fixed 0.3% and 1% at twice their
// rate, and ddp as there and at half and twice its rate, as the
// learning-rate file has them.
TEST(ShippedScenarios, ResNet18WarmupScreenTakesTheWarmupApart) {
  const auto base = paper_tta_scenario("resnet18-h100-fluct-115");
  const auto s = paper_tta_scenario("resnet18-cpu-warmup-screen");
  expect_same_wan(s, base);
  ASSERT_EQ(s.systems.size(), 47u);
  for (const auto& system : s.systems) {
    SCOPED_TRACE(system.label);
    EXPECT_EQ(system.config.compute_device, "cpu");
    EXPECT_EQ(system.config.model, "resnet18");
    EXPECT_EQ(system.config.dataset, "fashion-mnist");
    EXPECT_EQ(system.config.iterations, 10);
    EXPECT_EQ(system.config.evaluate_on, "validation");
    EXPECT_EQ(system.config.eval_interval, 5);
  }
  // The two settings of the GPU runs, as there.
  const auto& fill_80 = system_named(base, "stellatrain-fill-80");
  const auto& warmup = system_named(base, "warmup-fill-0.2");
  expect_same_system(system_named(s, "stellatrain-fill-80"), fill_80);
  expect_same_system(system_named(s, "warmup-fill-0.2"), warmup);
  // The warm-up's first density held: the base file's fixed-0.03 at 25%,
  // without the lookahead, and at half the rate.
  const auto& fixed = system_named(base, "fixed-0.03");
  const auto at_25 = [](train::StellaTrainOptions& o) { o.density = 0.25; };
  expect_changed_from(fixed, system_named(s, "fixed-0.25"), at_25);
  expect_changed_from(fixed, system_named(s, "fixed-0.25-no-lookahead"), [&](train::StellaTrainOptions& o) {
    at_25(o);
    o.compensation = "none";
  });
  expect_changed_from_at_lr(fixed, system_named(s, "fixed-0.25-lr-0.05"), at_25, 0.05);
  // The warm-up at half the rate, from 5%, and the controller at half the rate.
  const auto unchanged = [](train::StellaTrainOptions&) {};
  expect_changed_from_at_lr(warmup, system_named(s, "warmup-fill-0.2-lr-0.05"), unchanged, 0.05);
  expect_changed_from(warmup, system_named(s, "warmup-0.05-fill-0.2"),
                      [](train::StellaTrainOptions& o) { o.warmup.start = 0.05; });
  expect_changed_from_at_lr(fill_80, system_named(s, "stellatrain-fill-80-lr-0.05"), unchanged, 0.05);
  const auto& busy = system_named(base, "fill-85-busy");
  expect_same_system(system_named(s, "fill-85-busy"), busy);
  expect_changed_from_at_lr(busy, system_named(s, "fill-85-busy-lr-0.05"), unchanged, 0.05);
  const auto& fixed_1 = system_named(base, "fixed-0.01");
  expect_same_system(system_named(s, "fixed-0.01"), fixed_1);
  expect_changed_from(fixed_1, system_named(s, "fixed-0.02"), [](train::StellaTrainOptions& o) { o.density = 0.02; });
  const auto& fixed_0_5 = system_named(s, "fixed-0.005");
  expect_same_system(fixed_0_5, system_named(base, "fixed-0.005"));
  expect_same_system(system_named(s, "fixed-0.003"), system_named(base, "fixed-0.003"));
  expect_same_system(system_named(s, "ddp"), system_named(base, "ddp"));
  const auto tune_lr = paper_tta_scenario("resnet18-h100-fluct-115-tune-lr");
  for (const char* ddp : {"ddp-lr-0.025", "ddp-lr-0.1"}) {
    expect_same_system(system_named(s, ddp), system_named(tune_lr, ddp));
  }
  // Fixed 0.5% clipped: its clip_norm is all that differs.
  for (const int norm : {2, 3, 1000}) {
    expect_changed_from(fixed_0_5, system_named(s, "fixed-0.005-clip-" + std::to_string(norm)),
                        [norm](train::StellaTrainOptions& o) { o.clip_norm = norm; });
  }
  // Fixed 0.5% with its tensors of at most 512 elements sent whole.
  expect_changed_from(fixed_0_5, system_named(s, "fixed-0.005-dense-512"),
                      [](train::StellaTrainOptions& o) { o.dense_up_to = 512; });
  // And without staleness (nothing then to compensate).
  const auto no_staleness = [](train::StellaTrainOptions& o) {
    o.staleness = 0;
    o.compensation = "none";
  };
  expect_changed_from(fixed_0_5, system_named(s, "fixed-0.005-staleness-0"), no_staleness);
  // And at half and twice its rate.
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-lr-0.05"), unchanged, 0.05);
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-lr-0.2"), unchanged, 0.2);
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-lr-0.4"), unchanged, 0.4);
  // And with momentum correction at the node, masked, at ddp's rate and at
  // its own (the master then runs plain SGD).
  const auto at_node = [](train::StellaTrainOptions& o) {
    o.momentum_at = "node";
    o.momentum_masking = true;
  };
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-mc-lr-0.05"), at_node, 0.05);
  expect_changed_from(fixed_0_5, system_named(s, "fixed-0.005-mc-lr-0.1"), at_node);
  // And with the master's lazy momentum exact, at ddp's rate and half it.
  const auto exact = [](train::StellaTrainOptions& o) { o.lazy_momentum = "exact"; };
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-exact-lr-0.025"), exact, 0.025);
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "fixed-0.005-exact-lr-0.05"), exact, 0.05);
  // Fixed 0.5% at 0.2 with the density warm-up from 2% over 50 iterations.
  const auto& fixed_0_5_at_0_2 = system_named(s, "fixed-0.005-lr-0.2");
  expect_changed_from(fixed_0_5_at_0_2, system_named(s, "fixed-0.005-lr-0.2-warmup-0.02"),
                      [](train::StellaTrainOptions& o) {
                        o.warmup.iterations = 50;
                        o.warmup.start = 0.02;
                      });
  // And at 0.2 with the rate rising over its first 20 iterations.
  const auto& lr_warmup = system_named(s, "fixed-0.005-lr-0.2-lr-warmup-20");
  expect_changed_from(fixed_0_5_at_0_2, lr_warmup, unchanged);
  EXPECT_EQ(lr_warmup.config.warmup_iterations, 20);
  // And at 0.2 without staleness.
  expect_changed_from(fixed_0_5_at_0_2, system_named(s, "fixed-0.005-lr-0.2-staleness-0"), no_staleness);
  // And at 0.2 with exact top-k in place of the 16-float blocks.
  expect_changed_from(fixed_0_5_at_0_2, system_named(s, "fixed-0.005-topk-lr-0.2"),
                      [](train::StellaTrainOptions& o) { o.compressor = "topk"; });
  // And with exact top-k at about the blocks' bytes (0.5% / 2.56).
  expect_changed_from(fixed_0_5_at_0_2, system_named(s, "fixed-0.00195-topk-lr-0.2"),
                      [](train::StellaTrainOptions& o) { at_the_blocks_bytes(o, "topk"); });
  // And with thresholdv at that density.
  expect_changed_from(fixed_0_5_at_0_2, system_named(s, "fixed-0.00195-thresholdv-lr-0.2"),
                      [](train::StellaTrainOptions& o) { at_the_blocks_bytes(o, "thresholdv"); });
  // And the rule at 0.2 from there with exact top-k.
  expect_changed_from(system_named(s, "soonest-0.04-busy-start-0.005-lr-0.2"),
                      system_named(s, "soonest-0.04-busy-start-0.00195-topk-lr-0.2"),
                      [](train::StellaTrainOptions& o) { at_the_blocks_bytes(o, "topk"); });
  // The engine at full density at ddp's rate, with and without staleness.
  const auto dense = [](train::StellaTrainOptions& o) { o.density = 1.0; };
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "dense-lr-0.05"), dense, 0.05);
  expect_changed_from_at_lr(fixed_0_5, system_named(s, "dense-staleness-0-lr-0.05"),
                            [&](train::StellaTrainOptions& o) {
                              dense(o);
                              no_staleness(o);
                            },
                            0.05);
  // Fixed 0.3% and 1% at 0.2, beside fixed 0.5% there.
  expect_changed_from_at_lr(system_named(s, "fixed-0.003"), system_named(s, "fixed-0.003-lr-0.2"), unchanged, 0.2);
  expect_changed_from_at_lr(system_named(s, "fixed-0.01"), system_named(s, "fixed-0.01-lr-0.2"), unchanged, 0.2);
  // The soonest-target rule with the busy set's estimator: fill-85-busy
  // with sparsity_cost 0.1, and the 0.03 fitted on the fixed densities, in
  // place of filling 85% of the link.
  expect_changed_from(busy, system_named(s, "soonest-0.1-busy"),
                      [](train::StellaTrainOptions& o) { soonest_target(o, 0.1); });
  expect_changed_from(busy, system_named(s, "soonest-0.03-busy"),
                      [](train::StellaTrainOptions& o) { soonest_target(o, 0.03); });
  // The same from 0.5%, as the test file has it.
  expect_same_system(system_named(s, "soonest-0.1-busy-start-0.005"),
                     system_named(base, "soonest-0.1-busy-start-0.005"));
  // Fixed 0.5% and the rule from it at 0.2 at the cost fitted there, as
  // the test file has them; the rule at 0.2 at cost 0.1 it replaced.
  for (const char* at_0_2 : {"fixed-0.005-lr-0.2", "soonest-0.04-busy-start-0.005-lr-0.2"}) {
    expect_same_system(system_named(s, at_0_2), system_named(base, at_0_2));
  }
  expect_changed_from(system_named(base, "soonest-0.04-busy-start-0.005-lr-0.2"),
                      system_named(s, "soonest-0.1-busy-start-0.005-lr-0.2"),
                      [](train::StellaTrainOptions& o) { o.control.sparsity_cost = 0.1; });
  // The warm-up with the rate rising linearly over 20 and 50 iterations.
  for (const int lr_warmup : {20, 50}) {
    const auto& system = system_named(s, "warmup-fill-0.2-lr-warmup-" + std::to_string(lr_warmup));
    expect_changed_from(warmup, system, unchanged);
    EXPECT_EQ(system.config.warmup_iterations, lr_warmup);
  }
  for (const auto& system : s.systems) {
    if (system.label.find("lr-warmup") == std::string::npos) {
      EXPECT_EQ(system.config.warmup_iterations, 0) << system.label;
    }
  }
}

// ResNet-18's learning rates are picked on validation data: the tune file
// runs resnet18-h100-fluct-115.yaml's two controllers and ddp, each as
// configured there but for the rate, at 0.025, 0.05 and 0.1, evaluated on
// the validation set.
TEST(ShippedScenarios, ResNet18TuneLrSweepsTheTestFilesSystemsOnValidation) {
  const auto base = paper_tta_scenario("resnet18-h100-fluct-115");
  const auto s = paper_tta_scenario("resnet18-h100-fluct-115-tune-lr");
  expect_same_wan(s, base);
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(s.target_accuracy, base.target_accuracy);
  // label, the test file's system it varies, rate
  const std::vector<std::tuple<std::string, std::string, double>> systems = {
      {"stellatrain-fill-80-lr-0.025", "stellatrain-fill-80", 0.025},
      {"stellatrain-fill-80-lr-0.05", "stellatrain-fill-80", 0.05},
      {"stellatrain-fill-80", "stellatrain-fill-80", 0.1},
      {"fill-85-busy-lr-0.025", "fill-85-busy", 0.025},
      {"fill-85-busy-lr-0.05", "fill-85-busy", 0.05},
      {"fill-85-busy", "fill-85-busy", 0.1},
      {"ddp-lr-0.025", "ddp", 0.025},
      {"ddp", "ddp", 0.05},
      {"ddp-lr-0.1", "ddp", 0.1}};
  ASSERT_EQ(s.systems.size(), systems.size());
  for (const auto& [label, from, lr] : systems) {
    SCOPED_TRACE(label);
    const auto& system = system_named(s, label);
    const auto& like = system_named(base, from);
    EXPECT_EQ(system.config.system, like.config.system);
    EXPECT_EQ(system.config.options->to_json(), like.config.options->to_json());
    EXPECT_DOUBLE_EQ(system.config.lr, lr);
    EXPECT_DOUBLE_EQ(system.config.momentum, like.config.momentum);
    EXPECT_EQ(system.config.warmup_iterations, like.config.warmup_iterations);
    EXPECT_EQ(system.config.evaluate_on, "validation");
    EXPECT_EQ(like.config.evaluate_on, "test");
    EXPECT_EQ(system.config.compute_device, "cuda");
    EXPECT_EQ(system.config.iterations, like.config.iterations);
    EXPECT_EQ(system.config.eval_interval, like.config.eval_interval);
    EXPECT_EQ(system.config.eval_interval_after, like.config.eval_interval_after);
  }
  // The test files' own rates are the middle and top of the grid.
  EXPECT_DOUBLE_EQ(system_named(base, "stellatrain-fill-80").config.lr, 0.1);
  EXPECT_DOUBLE_EQ(system_named(base, "fill-85-busy").config.lr, 0.1);
  EXPECT_DOUBLE_EQ(system_named(base, "ddp").config.lr, 0.05);
}

}  // namespace
}  // namespace st::apps
