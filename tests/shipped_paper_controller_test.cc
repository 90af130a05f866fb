// The controller's scenarios in the paper's regime (scenarios/paper/
// resnet152-<link>-controller.yaml): each is its link's workload with
// every density rule and each of the options that keep the link full, one
// option more per variant. The other shipped scenarios are
// shipped_scenarios_test.cc's.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "apps/scenario.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#include "tests/scenario_test_util.h"
#ifdef ST_HAVE_SIM
#include "sim/sim_config.h"
#endif

namespace st::apps {
namespace {

// The controller on the paper's ResNet-152 timing runs (docs/control.md,
// "The compute window"): each link's file is scenarios/paper/'s workload
// and WAN, with each density rule as it is, with the load counted in the
// window, with that and one decrease per overrun episode, with those and
// resuming at the delivered rate after an episode, with all that and a
// probing ceiling, with all that and probes before the first iteration,
// with all that and a late peer's wait left out of the measured rate, with
// all that and a tick every half second, and with all that and bytes that
// arrived before their exchange left out of the measured rate, nothing
// else changed; and the half-second tick with the nodes' samples paired by
// iteration in place of the lag skipped, or with each node taking a
// plan's density at its own next iteration, and the samples paired with
// that switch and overrun episodes started only by the newest iteration,
// or with that switch and each sample judged by the density it ran at;
// and each iteration timed after its node's previous one, with the whole
// compute window planned and an overrun cutting half its waiting fraction,
// and with that and an episode's later ticks draining below the delivered
// rate.
TEST(ShippedScenarios, PaperControllerScenariosCountTheLoadOnlyWhereTheyNameIt) {
  for (const char* link : {"fluct-115", "const-100", "const-500"}) {
    SCOPED_TRACE(link);
    const auto base = paper_scenario(std::string("resnet152-") + link);
    const auto s = paper_scenario(std::string("resnet152-") + link + "-controller");
    expect_same_wan(s, base);
    EXPECT_EQ(s.seeds, (std::vector<uint64_t>{1, 2, 3}));
    const auto& paper_rule = system_named(base, "stellatrain");
    expect_same_system(system_named(s, "paper-rule"), paper_rule);
#ifdef ST_HAVE_SIM
    EXPECT_EQ(s.sim_compute->compute.kind, base.sim_compute->compute.kind);
    EXPECT_EQ(s.sim_compute->compute.device_tflops, base.sim_compute->compute.device_tflops);
    EXPECT_EQ(s.sim_compute->compute.cpu_gbps, base.sim_compute->compute.cpu_gbps);
#endif
    ASSERT_EQ(s.systems.size(), 48u);
    for (const auto& system : s.systems) {
      SCOPED_TRACE(system.label);
      EXPECT_EQ(system.config.model, paper_rule.config.model);
      EXPECT_EQ(system.config.batch_per_worker, paper_rule.config.batch_per_worker);
      EXPECT_EQ(system.config.iterations, 40);
      const auto& control = system.config.options_as<train::StellaTrainOptions>().control;
      EXPECT_EQ(control.window_includes_load, system.label.find("-load") != std::string::npos);
      EXPECT_EQ(control.estimator.decrease_once, system.label.find("-once") != std::string::npos);
      EXPECT_EQ(control.estimator.resume_at_delivered, system.label.find("-resume") != std::string::npos);
      const bool ceiling = system.label.find("-ceiling") != std::string::npos;
      EXPECT_EQ(control.estimator.probe_ceiling, ceiling ? 1.15 : 4.0);
      EXPECT_EQ(control.probe_at_start, system.label.find("-start") != std::string::npos);
      EXPECT_EQ(control.estimator.skip_peer_lag, system.label.find("-skip-lag") != std::string::npos);
      EXPECT_EQ(control.interval_s, system.label.find("-tick-0.5") != std::string::npos ? 0.5 : 1.0);
      EXPECT_EQ(control.estimator.skip_early_arrivals, system.label.find("-early") != std::string::npos);
      EXPECT_EQ(control.estimator.pair_by_iteration, system.label.find("-pair") != std::string::npos);
      EXPECT_EQ(control.early_density_switch, system.label.find("-switch-") != std::string::npos);
      EXPECT_EQ(control.estimator.fresh_overruns, system.label.find("-switch-fresh") != std::string::npos);
      EXPECT_EQ(control.estimator.samples_by_plan, system.label.find("-switch-plan") != std::string::npos);
      EXPECT_EQ(control.estimator.after_previous_iteration, system.label.find("-prev") != std::string::npos);
      const bool gentle = system.label.find("-safety-1-decrease-0.5") != std::string::npos;
      EXPECT_EQ(control.safety, gentle ? 1.0 : 0.9);
      EXPECT_EQ(control.estimator.wait_decrease, gentle ? 0.5 : 1.0);
      EXPECT_EQ(control.estimator.drain_at_delivered, system.label.find("-decrease-0.5-drain") != std::string::npos);
    }
    // Each variant is its predecessor with one option on.
    using Change = std::function<void(train::StellaTrainOptions&)>;
    const std::vector<std::pair<std::string, Change>> steps = {
        {"-load", [](train::StellaTrainOptions& o) { o.control.window_includes_load = true; }},
        {"-once", [](train::StellaTrainOptions& o) { o.control.estimator.decrease_once = true; }},
        {"-resume", [](train::StellaTrainOptions& o) { o.control.estimator.resume_at_delivered = true; }},
        {"-ceiling", [](train::StellaTrainOptions& o) { o.control.estimator.probe_ceiling = 1.15; }},
        {"-start", [](train::StellaTrainOptions& o) { o.control.probe_at_start = true; }},
        {"-skip-lag", [](train::StellaTrainOptions& o) { o.control.estimator.skip_peer_lag = true; }},
        {"-tick-0.5", [](train::StellaTrainOptions& o) { o.control.interval_s = 0.5; }},
        {"-early", [](train::StellaTrainOptions& o) { o.control.estimator.skip_early_arrivals = true; }}};
    for (const std::string rule : {"paper-rule", "fill-0.8", "soonest"}) {
      std::string label = rule;
      for (const auto& [suffix, change] : steps) {
        expect_changed_from(system_named(s, label), system_named(s, label + suffix), change);
        label += suffix;
      }
      const std::string chain = rule + "-load-once-resume-ceiling-start";
      expect_changed_from(system_named(s, chain + "-skip-lag-tick-0.5"), system_named(s, chain + "-pair-tick-0.5"),
                          [](train::StellaTrainOptions& o) {
                            o.control.estimator.skip_peer_lag = false;
                            o.control.estimator.pair_by_iteration = true;
                          });
      expect_changed_from(system_named(s, chain + "-skip-lag-tick-0.5"),
                          system_named(s, chain + "-skip-lag-tick-0.5-switch-next"),
                          [](train::StellaTrainOptions& o) { o.control.early_density_switch = true; });
      expect_changed_from(system_named(s, chain + "-pair-tick-0.5"),
                          system_named(s, chain + "-pair-tick-0.5-switch-fresh"),
                          [](train::StellaTrainOptions& o) {
                            o.control.early_density_switch = true;
                            o.control.estimator.fresh_overruns = true;
                          });
      expect_changed_from(system_named(s, chain + "-pair-tick-0.5-switch-fresh"),
                          system_named(s, chain + "-pair-tick-0.5-switch-plan"),
                          [](train::StellaTrainOptions& o) {
                            o.control.estimator.fresh_overruns = false;
                            o.control.estimator.samples_by_plan = true;
                          });
      expect_changed_from(system_named(s, chain + "-pair-tick-0.5-switch-fresh"),
                          system_named(s, chain + "-pair-tick-0.5-switch-fresh-prev"),
                          [](train::StellaTrainOptions& o) { o.control.estimator.after_previous_iteration = true; });
      expect_changed_from(system_named(s, chain + "-pair-tick-0.5-switch-fresh-prev"),
                          system_named(s, chain + "-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5"),
                          [](train::StellaTrainOptions& o) {
                            o.control.safety = 1.0;
                            o.control.estimator.wait_decrease = 0.5;
                          });
      expect_changed_from(system_named(s, chain + "-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5"),
                          system_named(s, chain + "-pair-tick-0.5-switch-fresh-prev-safety-1-decrease-0.5-drain"),
                          [](train::StellaTrainOptions& o) { o.control.estimator.drain_at_delivered = true; });
    }
  }
}

}  // namespace
}  // namespace st::apps
