// The system registry (core/train/system_registry.h): a system added the
// way docs/architecture.md's walk-through adds one (its options, its
// factory, one registration line, all in this file) is parsed from a
// scenario, takes its `train` flags, runs on the engine, and shows its
// options in the manifest and summary, with no other file touched; the
// built-in systems' options are read and refused as before.
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "apps/run_summary.h"
#include "apps/scenario.h"
#include "apps/system_flags.h"
#include "core/train/system_registry.h"
#include "core/train/systems/sync/sync_system.h"
#include "tests/net_test_util.h"
#include "tests/train_test_util.h"

namespace st::train {
namespace {

namespace fs = std::filesystem;

// ---- The toy system: DDP whose step scales the mean gradient by `factor`.
struct ScaledDdpOptions final : OptionsOf<ScaledDdpOptions> {
  double factor = 1.0;
  static std::vector<OptionField> make_fields() {
    return Fields<ScaledDdpOptions>().number("factor", &ScaledDdpOptions::factor, 0.0, 1.0, "--toy-factor",
                                             "Scale of the mean gradient");
  }
};

class ScaledDdp final : public DdpSystem {
 public:
  explicit ScaledDdp(NodeContext& ctx) : DdpSystem(ctx, {}, "toy-scaled-ddp") {
    const float factor = static_cast<float>(ctx.config.options_as<ScaledDdpOptions>().factor);
    if (factor != 1.0f) set_gradient_scale(factor / static_cast<float>(ctx.config.nodes * ctx.config.gpus_per_node));
  }
};

SystemDescriptor scaled_ddp_system() {
  return describe_system<ScaledDdpOptions, ScaledDdp>(
      "toy-scaled-ddp",
      "A test's toy: DDP with a scaled step");
}

// The registry line.
const bool kRegistered = (register_system(scaled_ddp_system()), true);
// ---- End of the toy system.

std::string write_scenario(const std::string& name, const std::string& systems) {
  const fs::path path = fs::path(::testing::TempDir()) / (name + ".yaml");
  std::ofstream(path) << "clusters:\n  - {name: a, nodes: 1, gpus_per_node: 2}\n  - {name: b, nodes: 1, gpus_per_node: 2}\n"
                         "links:\n  wan:\n    default: {mbps: 100, delay_ms: 5}\n"
                         "model: mlp\ndataset: synthetic\nbatch: {per_gpu: 16}\n"
                         "systems:\n"
                      << systems
                      << "target_accuracy: 0.5\nbudget: {iterations: 6}\neval: {interval: 0, samples: 200}\n";
  return path.string();
}

std::string error_of(const std::string& path) {
  try {
    apps::load_scenario(path);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(SystemRegistry, ATestSystemIsRegisteredBesideTheBuiltIns) {
  ASSERT_TRUE(kRegistered);
  EXPECT_TRUE(is_system_name("toy-scaled-ddp"));
  EXPECT_EQ(system_names().front(), "stellatrain");
  EXPECT_EQ(system_names().back(), "toy-scaled-ddp");
  EXPECT_EQ(speedup_reference().name, "ddp");
  EXPECT_THROW(register_system(scaled_ddp_system()), std::invalid_argument) << "a name is taken once";
  SystemDescriptor empty;
  empty.name = "toy-without-parts";
  EXPECT_THROW(register_system(empty), std::invalid_argument);
}

TEST(SystemRegistry, ScenarioReadsTheToysOptionsAndRefusesOthers) {
  const auto s = apps::load_scenario(write_scenario("toy", "  - {name: toy-scaled-ddp, factor: 0.5}\n  - ddp\n"));
  ASSERT_EQ(s.systems.size(), 2u);
  EXPECT_EQ(s.systems[0].config.system, "toy-scaled-ddp");
  EXPECT_DOUBLE_EQ(s.systems[0].config.options_as<ScaledDdpOptions>().factor, 0.5);
  EXPECT_EQ(s.systems[0].config.label, "toy-scaled-ddp");
  EXPECT_NE(error_of(write_scenario("toy-bad", "  - {name: toy-scaled-ddp, factor: 2}\n")).find(
                "systems[0].factor (line 11): 2 is out of range"),
            std::string::npos);
  EXPECT_NE(error_of(write_scenario("toy-other", "  - {name: ddp, factor: 0.5}\n"))
                .find("systems[0].factor (line 11): only applies to toy-scaled-ddp (not ddp)"),
            std::string::npos);
  EXPECT_NE(error_of(write_scenario("toy-foreign", "  - {name: toy-scaled-ddp, density: 0.1}\n"))
                .find("systems[0].density (line 11): only applies to stellatrain and topk-sync (not toy-scaled-ddp)"),
            std::string::npos);
  EXPECT_NE(error_of(write_scenario("toy-unknown", "  - {name: toy-scaled-ddp, colour: red}\n"))
                .find("unknown key (expected one of: name, label, optimizer, budget, factor)"),
            std::string::npos);
}

TEST(SystemRegistry, TrainFlagsComeFromEverySystemsTable) {
  auto parse = [](std::vector<std::string> argv, TrainConfig& c) {
    CLI::App app;
    apps::SystemFlags flags;
    app.add_option("--system", c.system);
    flags.add_to(app);
    std::reverse(argv.begin(), argv.end());
    app.parse(argv);
    c.use_system(c.system);
    c.options->use_command_defaults();
    flags.apply(c);
  };
  TrainConfig toy;
  parse({"--system", "toy-scaled-ddp", "--toy-factor", "0.25"}, toy);
  EXPECT_DOUBLE_EQ(toy.options_as<ScaledDdpOptions>().factor, 0.25);
  TrainConfig st;
  parse({"--system", "stellatrain", "--density", "0.1", "--no-controller", "--compensation", "lookahead"}, st);
  const auto& o = st.options_as<StellaTrainOptions>();
  EXPECT_DOUBLE_EQ(o.density, 0.1);
  EXPECT_FALSE(o.controller);
  EXPECT_EQ(o.compensation, "lookahead");
  TrainConfig tuned;
  parse({"--system", "stellatrain", "--control-slow-start-ticks", "2", "--density-warmup-iterations", "40",
         "--density-warmup-start", "0.2", "--control-sparsity-cost", "0.27", "--control-drain-every-ticks", "4",
         "--control-drain-iterations", "6"},
        tuned);
  const auto& t = tuned.options_as<StellaTrainOptions>();
  EXPECT_EQ(t.control.estimator.slow_start_ticks, 2);
  EXPECT_EQ(t.warmup.iterations, 40);
  EXPECT_DOUBLE_EQ(t.warmup.start, 0.2);
  EXPECT_DOUBLE_EQ(t.control.sparsity_cost, 0.27);
  EXPECT_EQ(t.control.drain_every_ticks, 4);
  EXPECT_EQ(t.control.drain_iterations, 6);
  EXPECT_FALSE(t.control.probe_at_start);
  EXPECT_FALSE(t.control.estimator.skip_peer_lag);
  EXPECT_FALSE(t.control.estimator.skip_early_arrivals);
  EXPECT_FALSE(t.control.estimator.pair_by_iteration);
  EXPECT_FALSE(t.control.early_density_switch);
  EXPECT_FALSE(t.control.estimator.fresh_overruns);
  EXPECT_FALSE(t.control.estimator.samples_by_plan);
  EXPECT_FALSE(t.control.estimator.after_previous_iteration);
  TrainConfig switched;
  parse({"--system", "stellatrain", "--control-probe-at-start", "--control-skip-peer-lag",
         "--control-skip-early-arrivals"},
        switched);
  EXPECT_TRUE(switched.options_as<StellaTrainOptions>().control.probe_at_start);
  EXPECT_TRUE(switched.options_as<StellaTrainOptions>().control.estimator.skip_peer_lag);
  EXPECT_TRUE(switched.options_as<StellaTrainOptions>().control.estimator.skip_early_arrivals);
  TrainConfig paired;
  parse({"--system", "stellatrain", "--control-pair-by-iteration", "--control-early-density-switch",
         "--control-fresh-overruns"},
        paired);
  EXPECT_TRUE(paired.options_as<StellaTrainOptions>().control.estimator.pair_by_iteration);
  EXPECT_TRUE(paired.options_as<StellaTrainOptions>().control.early_density_switch);
  EXPECT_TRUE(paired.options_as<StellaTrainOptions>().control.estimator.fresh_overruns);
  TrainConfig by_plan;
  parse({"--system", "stellatrain", "--control-samples-by-plan"}, by_plan);
  EXPECT_TRUE(by_plan.options_as<StellaTrainOptions>().control.estimator.samples_by_plan);
  TrainConfig ordered;
  parse({"--system", "stellatrain", "--control-after-previous-iteration"}, ordered);
  EXPECT_TRUE(ordered.options_as<StellaTrainOptions>().control.estimator.after_previous_iteration);
  EXPECT_DOUBLE_EQ(ordered.options_as<StellaTrainOptions>().control.estimator.wait_decrease, 1);
  TrainConfig gentle;
  parse({"--system", "stellatrain", "--control-wait-decrease", "0.5"}, gentle);
  EXPECT_DOUBLE_EQ(gentle.options_as<StellaTrainOptions>().control.estimator.wait_decrease, 0.5);
  TrainConfig none;
  EXPECT_THROW(parse({"--system", "stellatrain", "--control-wait-decrease", "0"}, none), std::invalid_argument);
  EXPECT_FALSE(gentle.options_as<StellaTrainOptions>().control.estimator.drain_at_delivered);
  TrainConfig drain;
  parse({"--system", "stellatrain", "--control-drain-at-delivered"}, drain);
  EXPECT_TRUE(drain.options_as<StellaTrainOptions>().control.estimator.drain_at_delivered);
  // --control-preset is applied before --no-controller and the other
  // --control-* flags, whatever their order on the command line.
  TrainConfig preset;
  parse({"--system", "stellatrain", "--control-link-utilization", "0.9", "--control-preset", "keep-busy"}, preset);
  const auto& busy = preset.options_as<StellaTrainOptions>();
  EXPECT_TRUE(busy.controller) << "a preset turns the controller on";
  EXPECT_DOUBLE_EQ(busy.control.link_utilization, 0.9);
  EXPECT_EQ(busy.control.early_ticks, 4);
  EXPECT_TRUE(busy.control.estimator.drain_at_delivered);
  TrainConfig off;
  parse({"--system", "stellatrain", "--no-controller", "--control-preset", "keep-busy"}, off);
  EXPECT_FALSE(off.options_as<StellaTrainOptions>().controller) << "--no-controller wins over the preset";
  TrainConfig unknown;
  EXPECT_THROW(parse({"--system", "stellatrain", "--control-preset", "fastest"}, unknown), std::invalid_argument);
  TrainConfig both;
  parse({"--system", "stellatrain", "--control-samples-by-plan", "--control-fresh-overruns"}, both);
  EXPECT_THROW(both.options->validate(both), std::invalid_argument);
  TrainConfig fraction;
  EXPECT_THROW(parse({"--system", "stellatrain", "--control-slow-start-ticks", "1.5"}, fraction), std::invalid_argument);
  TrainConfig shared;
  parse({"--system", "topk-sync", "--density", "0.2"}, shared);
  EXPECT_DOUBLE_EQ(shared.options_as<TopkSyncOptions>().density, 0.2) << "one --density serves both systems";
  TrainConfig wrong;
  try {
    parse({"--system", "ddp", "--toy-factor", "0.5"}, wrong);
    FAIL() << "a flag of another system is an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--toy-factor: does not apply to ddp (only to toy-scaled-ddp)"),
              std::string::npos)
        << e.what();
  }
  TrainConfig range;
  EXPECT_THROW(parse({"--system", "toy-scaled-ddp", "--toy-factor", "3"}, range), std::invalid_argument);
}

TEST(SystemRegistry, TheToyRunsOnTheEngineAndFactorOneIsDdp) {
  auto c = small_config("toy-scaled-ddp");
  c.out_dir = (fs::path(::testing::TempDir()) / "toy-run").string();
  fs::remove_all(c.out_dir);
  const auto toy = train_real(c);
  auto d = c;
  d.use_system("ddp");
  d.out_dir.clear();
  const auto ddp = train_real(d);
  EXPECT_EQ(toy.checksums, ddp.checksums) << "factor 1: the very same arithmetic as ddp";
  std::ifstream in(fs::path(c.out_dir) / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  EXPECT_EQ(manifest.at("system"), "toy-scaled-ddp");
  EXPECT_DOUBLE_EQ(manifest.at("options").at("factor").get<double>(), 1.0);
  c.options_as<ScaledDdpOptions>().factor = 0.5;
  c.out_dir.clear();
  EXPECT_NE(train_real(c).checksums, ddp.checksums);
}

TEST(SystemRegistry, TheSummaryShowsTheToysOptions) {
  const auto scenario = apps::load_scenario(write_scenario("toy-run", "  - {name: toy-scaled-ddp, factor: 0.5}\n  - ddp\n"));
  RealBackend backend;
  apps::SummaryBuilder summary(scenario, backend, {1});
  for (const auto& system : scenario.systems) {
    auto c = system.config;
    c.quiet = true;
    c.out_dir = (fs::path(::testing::TempDir()) / "toy-summary" / system.label).string();
    fs::remove_all(c.out_dir);
    backend.train(c);
    summary.add_system(system, {apps::read_outcome(c.out_dir, system.label, 1, scenario.target_accuracy)});
  }
  const auto json = summary.json();
  const auto& toy = json.at("systems").at("toy-scaled-ddp");
  EXPECT_DOUBLE_EQ(toy.at("options").at("factor").get<double>(), 0.5);
  EXPECT_EQ(toy.at("system"), "toy-scaled-ddp");
  EXPECT_FALSE(toy.contains("error")) << toy.dump();
  EXPECT_EQ(json.at("speedup_reference"), "ddp");
  EXPECT_TRUE(json.at("systems").at("ddp").at("options").contains("optimizer"));
}

// Without ddp in the scenario there is nothing to divide by: the speedup is
// null (the plots and the table read the key), not absent.
TEST(SystemRegistry, WithoutDdpTheSpeedupIsNull) {
  const auto scenario = apps::load_scenario(write_scenario("toy-alone", "  - {name: toy-scaled-ddp, factor: 0.5}\n"));
  RealBackend backend;
  apps::SummaryBuilder summary(scenario, backend, {1});
  auto c = scenario.systems.at(0).config;
  c.quiet = true;
  c.out_dir = (fs::path(::testing::TempDir()) / "toy-alone" / "toy-scaled-ddp").string();
  fs::remove_all(c.out_dir);
  backend.train(c);
  summary.add_system(scenario.systems.at(0), {apps::read_outcome(c.out_dir, "toy-scaled-ddp", 1, scenario.target_accuracy)});
  const auto toy = summary.json().at("systems").at("toy-scaled-ddp");
  ASSERT_TRUE(toy.contains("speedup_vs_ddp")) << toy.dump();
  EXPECT_TRUE(toy.at("speedup_vs_ddp").is_null());
}

}  // namespace
}  // namespace st::train
