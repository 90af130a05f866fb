// Scenario files (apps/scenario.h): defaults, batch splitting, backends,
// links and compute come out as documented; every bad input is an error
// naming the file, the key path and the line. Each system's own options
// are scenario_system_options_test.cc's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>

#include "apps/backends.h"
#include "apps/scenario.h"
#include "tests/scenario_file_fixture.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#include "core/train/systems/sync/sync_options.h"
#ifdef ST_HAVE_SIM
#include "sim/sim_config.h"
#endif

namespace st::apps {
namespace {

TEST_F(ScenarioFile, ComputeDeviceReachesEverySystemsConfig) {
  const auto s = load_scenario(write(text({}, "compute_device: cuda:1\n")));
  for (const auto& system : s.systems) EXPECT_EQ(system.config.compute_device, "cuda:1");
  const auto plain = load_scenario(write(text()));
  for (const auto& system : plain.systems) EXPECT_EQ(system.config.compute_device, "cpu");
}

TEST_F(ScenarioFile, DefaultsAreTheDocumentedOnes) {
  const auto s = load_scenario(write(text(), "defaults-example.yaml"));
  EXPECT_EQ(s.name, "defaults-example");
  EXPECT_EQ(s.backend, "sim");
  EXPECT_EQ(s.seeds, std::vector<uint64_t>{1});
  ASSERT_EQ(s.systems.size(), 2u);
  const auto& c = s.systems[0].config;
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus_per_node, 2);
  EXPECT_EQ(c.batch_per_worker, 64u);
  EXPECT_EQ(c.iterations, 10);
  EXPECT_EQ(c.time_budget_s, 0);
  EXPECT_EQ(c.eval_interval, 50);
  EXPECT_EQ(c.eval_samples, 0u);  // the whole test set
  EXPECT_DOUBLE_EQ(c.lr, 0.05);
  EXPECT_DOUBLE_EQ(c.options_as<train::StellaTrainOptions>().density, 0.05);
  EXPECT_EQ(s.cost_per_hour(), 0);
#ifdef ST_HAVE_SIM
  EXPECT_EQ(s.sim_compute->compute.kind, "measured");
#endif
}

// Label skew places the samples by class across the nodes: it reaches
// every system's config, is 0 unless given, and must lie in [0, 1].
TEST_F(ScenarioFile, LabelSkewReachesEverySystemsConfig) {
  const auto s = load_scenario(write(text({{"dataset", "dataset: {name: synthetic, label_skew: 0.8}\n"}})));
  for (const auto& system : s.systems) EXPECT_DOUBLE_EQ(system.config.label_skew, 0.8);
  for (const auto& system : load_scenario(write(text())).systems) EXPECT_EQ(system.config.label_skew, 0);
  EXPECT_NE(error_of(text({{"dataset", "dataset: {name: synthetic, label_skew: 1.2}\n"}}))
                .find("dataset.label_skew (line 8)"),
            std::string::npos);
}

// The emu backend's node processes reload the scenario file: the run's
// placement (`run --label-skew` may differ from the file's) travels as a flag.
TEST_F(ScenarioFile, EmuNodesAreToldTheRunsLabelSkew) {
  const auto s = load_scenario(write(text({{"dataset", "dataset: {name: synthetic, label_skew: 0.8}\n"}})));
  auto config = s.systems.front().config;
  config.label_skew = 0.5;
  const auto args = node_arguments("s.yaml", s.systems.front().label, config);
  const auto flag = std::find(args.begin(), args.end(), "--label-skew");
  ASSERT_NE(flag, args.end());
  ASSERT_NE(flag + 1, args.end());
  EXPECT_EQ(*(flag + 1), "0.5");
}

// Timing runs skip the math, and only a compute-time model prices it: a
// profile or analytic model lets every backend run them (the real and emu
// nodes pace their compute by it, core/runtime/paced_executor.h); the
// measured model, which prices this machine, is refused before anything
// starts, on every backend.
TEST_F(ScenarioFile, TimingRunsNeedAModelThatPricesTheirCompute) {
  const auto priced = load_scenario(write(text({{"target_accuracy", ""}}, "compute: {model: analytic, math: timing}\n")));
  EXPECT_EQ(backend_error(priced, "real"), "");
#ifdef ST_HAVE_EMU
  EXPECT_EQ(backend_error(priced, "emu"), "");
#endif
  const auto measured = load_scenario(write(text({{"target_accuracy", ""}}, "compute: {model: measured, math: timing}\n")));
  EXPECT_NE(backend_error(measured, "real").find("math: timing runs need a backend that prices compute by a model"),
            std::string::npos);
#ifdef ST_HAVE_EMU
  EXPECT_NE(backend_error(measured, "emu").find("math: timing runs need a backend that prices compute by a model"),
            std::string::npos);
#endif
}

// The emu backend's node processes reload the scenario file: the run's
// share of sampled stages (`run --stage-sample` may differ from the file's)
// travels as a flag, and only when stages are sampled.
TEST_F(ScenarioFile, EmuNodesAreToldTheRunsStageSample) {
  const auto s = load_scenario(write(text({{"target_accuracy", ""}}, "compute: {model: analytic, math: timing}\n")));
  auto config = s.systems.front().config;
  auto args = node_arguments("s.yaml", s.systems.front().label, config);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--stage-sample"), args.end());
  config.stage_sample.fraction = 0.01;
  args = node_arguments("s.yaml", s.systems.front().label, config);
  const auto flag = std::find(args.begin(), args.end(), "--stage-sample");
  ASSERT_NE(flag, args.end());
  ASSERT_NE(flag + 1, args.end());
  EXPECT_EQ(*(flag + 1), "0.01");
}

// A time budget alone bounds a run: as many iterations as fit (the
// engine's per-iteration state lives only while an iteration is in flight).
TEST_F(ScenarioFile, ATimeBudgetAloneIsABudget) {
  const auto s = load_scenario(write(text({{"budget", "budget: {time_s: 60}\n"}})));
  for (const auto& system : s.systems) {
    EXPECT_EQ(system.config.iterations, train::kUnboundedIterations);
    EXPECT_DOUBLE_EQ(system.config.time_budget_s, 60);
  }
#ifdef ST_HAVE_EMU
  // The emulator's node processes stop on their own clocks: it refuses.
  EXPECT_NE(backend_error(s, "emu").find("budget.time_s: not supported on the emu backend"), std::string::npos);
#endif
}

TEST_F(ScenarioFile, OptionsBatchSeedsAndCosts) {
  const auto s = load_scenario(write(text(
      {{"clusters", "clusters:\n  - {name: a, nodes: 2, gpus_per_node: 2, cost_per_hour: 3}\n"
                    "  - {name: b, nodes: 1, gpus_per_node: 2, cost_per_hour: 1.5}\n"},
       {"systems", "systems:\n  - {name: stellatrain, label: st-1pct, density: 0.01, fp16: true, staleness: 0}\n"
                   "  - {name: topk-sync, density: 0.1}\n"},
       {"budget", "budget: {iterations: 20, time_s: 30}\n"}},
      "batch: {global: 48}\nseeds: [3, 4]\n"
      "eval: {interval: 5, samples: 0}\noptimizer: {lr: 0.1, momentum: 0.5}\nbackend: real\n")));
  EXPECT_EQ(s.backend, "real");
  EXPECT_EQ(s.seeds, (std::vector<uint64_t>{3, 4}));
  EXPECT_DOUBLE_EQ(s.cost_per_hour(), 2 * 3 + 1.5);
  ASSERT_EQ(s.systems.size(), 2u);
  const auto& st = s.systems[0];
  EXPECT_EQ(st.label, "st-1pct");
  const auto& o = st.config.options_as<train::StellaTrainOptions>();
  EXPECT_DOUBLE_EQ(o.density, 0.01);
  EXPECT_TRUE(o.fp16_values);
  EXPECT_EQ(o.staleness, 0);
  EXPECT_EQ(st.config.batch_per_worker, 8u);  // 48 over 3 nodes x 2 GPUs
  EXPECT_EQ(st.config.eval_interval, 5);
  EXPECT_EQ(st.config.eval_samples, 0u);
  EXPECT_DOUBLE_EQ(st.config.lr, 0.1);
  EXPECT_DOUBLE_EQ(s.systems[1].config.options_as<train::TopkSyncOptions>().density, 0.1);
  EXPECT_EQ(s.systems[1].label, "topk-sync");
}

TEST_F(ScenarioFile, BackendsAreCheckedBeforeAnythingRuns) {
  const auto s = load_scenario(write(text({{"systems", "systems:\n  - ddp\n  - ddp-gloo\n"}})));
#ifdef ST_HAVE_EMU
  EXPECT_EQ(backend_error(s, "emu"), "");  // ddp-gloo runs on the emulated network
#else
  EXPECT_NE(backend_error(s, "emu").find("this build has no emulation backend"), std::string::npos);
#endif
  EXPECT_NE(backend_error(s, "warp").find("'warp' is not one of: sim, real, emu"), std::string::npos);
#ifdef ST_HAVE_SIM
  EXPECT_NE(backend_error(s, "sim").find("systems[1]: ddp-gloo runs only on real networks"), std::string::npos);
#endif
  EXPECT_EQ(backend_error(s, "real"), "");
}

TEST_F(ScenarioFile, EachBackendChecksTheNetworkItCanBuild) {
  // One delay per direction: the emulator can, an ns-3 point-to-point link cannot.
  const auto asymmetric = load_scenario(write(text(
      {{"links", "links:\n  wan:\n    a->b: {mbps: 100, delay_ms: 20}\n    b->a: {mbps: 100, delay_ms: 30}\n"}})));
  EXPECT_EQ(asymmetric.network.wan.at({1, 0}).delay_ms, 30);
#ifdef ST_HAVE_SIM
  EXPECT_NE(backend_error(asymmetric, "sim").find("the sim backend cannot build this network"), std::string::npos);
#endif
#ifdef ST_HAVE_EMU
  EXPECT_EQ(backend_error(asymmetric, "emu"), "");
  // LAN delay is not emulated.
  const auto slow_lan = load_scenario(write(text(
      {{"links", "links:\n  lan: {delay_ms: 5}\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"}})));
  EXPECT_NE(backend_error(slow_lan, "emu").find("does not add LAN delay"), std::string::npos);
#endif
}

TEST_F(ScenarioFile, TheNetworkModelIsPacketUnlessTheLinksSayFlow) {
  EXPECT_EQ(load_scenario(write(text())).network.model, net::NetworkModel::packet);
  const auto flow = load_scenario(write(text(
      {{"links", "links:\n  model: flow\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"}})));
  EXPECT_EQ(flow.network.model, net::NetworkModel::flow);
  const auto bad = error_of(text({{"links", "links:\n  model: fluid\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"}}));
  EXPECT_NE(bad.find("links.model"), std::string::npos) << bad;
  EXPECT_NE(bad.find("'fluid' is not a network model"), std::string::npos) << bad;
#ifdef ST_HAVE_SIM
  EXPECT_EQ(backend_error(flow, "sim"), "");
#endif
#ifdef ST_HAVE_EMU
  // The emulator carries real packets: it says so rather than ignore the key.
  EXPECT_NE(backend_error(flow, "emu").find("flow-level model"), std::string::npos);
#endif
}


// links.rto_min_ms: Linux's rto_min for every backend (0, the default,
// leaves each its own; net/topology_config.h).
TEST_F(ScenarioFile, RtoMinIsALinksKeyForEveryBackend) {
  EXPECT_EQ(load_scenario(write(text())).network.rto_min_ms, 0);
  const auto linux_like = load_scenario(write(text(
      {{"links", "links:\n  rto_min_ms: 200\n  wan:\n    default: {mbps: 100, delay_ms: 20}\n"}})));
  EXPECT_EQ(linux_like.network.rto_min_ms, 200);
  const auto bad = error_of(text({{"links", "links:\n  rto_min_ms: 0\n  wan:\n    default: {mbps: 100}\n"}}));
  EXPECT_NE(bad.find("links.rto_min_ms (line 5): 0 is out of range"), std::string::npos) << bad;
#ifdef ST_HAVE_SIM
  EXPECT_EQ(backend_error(linux_like, "sim"), "");
#endif
#ifdef ST_HAVE_EMU
  EXPECT_EQ(backend_error(linux_like, "emu"), "");
#endif
}

// Dense evaluations where the report targets are decided, sparse after.
TEST_F(ScenarioFile, EvaluationsAtTheTargetsAndOnTheValidationSet) {
  const auto s = load_scenario(write(text({}, "report_targets: [0.4, 0.45]\n"
                                             "eval: {on: validation, interval: 2, interval_after_targets: 20}\n")));
  EXPECT_EQ(s.report_targets, (std::vector<double>{0.4, 0.45, 0.5}));
  const auto& c = s.systems[0].config;
  EXPECT_EQ(c.evaluate_on, "validation");
  EXPECT_EQ(c.eval_interval, 2);
  EXPECT_EQ(c.eval_interval_after, 20);
  EXPECT_DOUBLE_EQ(c.eval_dense_until, 0.5);
  expect_errors({{text({}, "report_targets: [0.4, 0.4]\n"), "report_targets[1] (line 14): is listed twice"},
                 {text({}, "report_targets: [85]\n"), "report_targets[0] (line 14): 85 is above 1"},
                 {text({}, "eval: {on: train}\n"), "eval.on (line 14)"}},
                error_of);
}

TEST_F(ScenarioFile, UnknownKeysAtEveryDepth) {
  expect_errors(
      {
          {text({}, "colour: red\n"), "colour (line 14): unknown key"},
          {text({{"clusters", "clusters:\n  - {name: a, colour: red}\n  - {name: b}\n"}}), "clusters[0].colour (line 2): unknown key"},
          {text({{"links", "links:\n  wan:\n    default: {mbps: 100, colour: red}\n"}}), "links.wan.default.colour (line 6): unknown key"},
          {text({{"links", "links:\n  colour: red\n  wan: {default: {mbps: 1}}\n"}}), "links.colour (line 5): unknown key"},
          {text({{"systems", "systems:\n  - stellatrain\n  - {name: ddp, colour: red}\n"}}), "systems[1].colour (line 11): unknown key"},
          {text({}, "optimizer: {name: sgd, beta: 0.9}\n"), "optimizer.beta (line 14): unknown key"},
          {text({{"budget", "budget: {iterations: 10, epochs: 3}\n"}}), "budget.epochs (line 13): unknown key"},
          {text({}, "eval: {every: 3}\n"), "eval.every (line 14): unknown key"},
          {text({}, "batch: {per_node: 3}\n"), "batch.per_node (line 14): unknown key"},
          {text({}, "compute: {model: measured, colour: red}\n"), "compute.colour (line 14): unknown key"},
          {text({{"dataset", "dataset: {name: synthetic, colour: red}\n"}}), "dataset.colour (line 8): unknown key"},
      },
      error_of);
}

TEST_F(ScenarioFile, BadValuesAndRanges) {
  expect_errors(
      {
          {text({{"target_accuracy", "target_accuracy: high\n"}}), "target_accuracy (line 12): 'high' is not a number"},
          {text({}, "compute_device: gpu\n"), "compute_device (line 14): compute device 'gpu': expected cpu, cuda or cuda:N"},
          {text({}, "compute_device: cuda:x\n"), "compute_device (line 14): compute device 'cuda:x'"},
          {text({{"target_accuracy", "target_accuracy: 85\n"}}), "target_accuracy (line 12): 85 is above 1: give a fraction, e.g. 0.85 for 85%"},
          {text({{"target_accuracy", "target_accuracy: 1.5\n"}}), "target_accuracy (line 12): 1.5 is above 1"},
          {text({{"target_accuracy", "target_accuracy: 0\n"}}), "target_accuracy (line 12): 0 is out of range"},
          {text({{"budget", "budget: {iterations: 1.5}\n"}}), "budget.iterations (line 13): 1.5 is not a whole number"},
          {text({{"budget", "budget: {iterations: 0}\n"}}), "budget.iterations (line 13): 0 is out of range"},
          {text({{"budget", "budget: {iterations: 5, time_s: -1}\n"}}), "budget.time_s (line 13): -1 is out of range"},
          {text({}, "eval: {samples: -1}\n"), "eval.samples (line 14): -1 is out of range"},
          {text({{"model", "model: [cnn]\n"}}), "model (line 7): expected a zoo model's name or {torchscript: FILE, ...}"},
          {text({{"model", "model: gpt5\n"}}), "model (line 7): 'gpt5' is not one of: "},
          {text({{"model", "model: {torchscript: nothere.pt}\n"}}), "model.torchscript (line 7): no such file: "},
          {text({{"model", "model: {name: cnn}\n"}}), "model (line 7): a model given as a map needs `torchscript: FILE`"},
          {text({{"dataset", "dataset: npz\n"}}), "dataset (line 8): the npz dataset needs its file"},
          {text({{"dataset", "dataset: {name: npz}\n"}}), "dataset (line 8): the npz dataset needs `file: FILE.npz`"},
          {text({{"dataset", "dataset: {name: npz, file: nothere.npz}\n"}}), "nothere.npz: no such file"},
          {text({{"dataset", "dataset: {name: fashion-mnist, file: x.npz}\n"}}),
           "dataset.file (line 8): only the npz dataset reads a file"},
          {text({{"dataset", "dataset: imagenet\n"}}), "dataset (line 8): 'imagenet' is not one of"},
          {text({{"dataset", "dataset: {name: synthetic, dir: /tmp}\n"}}), "dataset.dir (line 8): the synthetic dataset has no files"},
          {text({{"clusters", "clusters: {a: 1}\n"}}), "clusters (line 1): expected a list"},
          {text({{"clusters", "clusters: []\n"}}), "needs at least one cluster"},
          {text({{"clusters", "clusters:\n  - {name: a, nodes: 0}\n  - {name: b}\n"}}), "clusters[0].nodes (line 2): 0 is out of range"},
          {text({{"clusters", "clusters:\n  - {name: a}\n  - {name: a}\n"}}), "clusters[1].name (line 3): cluster name 'a' is used twice"},
          {text({{"clusters", "clusters:\n  - {name: a, cost_per_hour: -2}\n  - {name: b}\n"}}), "clusters[0].cost_per_hour (line 2)"},
          {text({{"systems", "systems:\n  - {name: stellatrain, fp16: maybe}\n  - ddp\n"}}), "systems[0].fp16 (line 10): 'maybe' is not true or false"},
          {text({{"systems", "systems:\n  - {name: stellatrain, density: 2}\n  - ddp\n"}}), "systems[0].density (line 10): 2 is out of range"},
          {text({{"systems", "systems:\n  - {name: ddp, density: 0.1}\n  - stellatrain\n"}}), "systems[0].density (line 10): only applies to stellatrain and topk-sync"},
          {text({{"systems", "systems:\n  - {name: topk-sync, staleness: 0}\n  - ddp\n"}}), "systems[0].staleness (line 10): only applies to stellatrain"},
          {text({{"systems", "systems:\n  - {name: stellatrain, compressor: zip}\n  - ddp\n"}}), "systems[0].compressor (line 10): 'zip' is not one of"},
          {text({{"systems", "systems:\n  - ddp\n  - ddp\n"}}), "systems[1] (line 11): label 'ddp' is used twice"},
          {text({{"systems", "systems:\n  - {name: ddp, label: a/b}\n  - stellatrain\n"}}), "systems[0].label (line 10): use letters"},
          {text({{"systems", "systems: []\n"}}), "systems (line 9): needs at least one system"},
          {text({}, "seeds: 3\n"), "seeds (line 14): expected a list of seeds"},
          {text({}, "seeds: [1, 1]\n"), "seeds[1] (line 14): seed 1 is listed twice"},
          {text({}, "optimizer: {name: adam}\n"), "optimizer.name (line 14): 'adam' is not one of: sgd"},
          {text({}, "batch: {per_gpu: 8, global: 32}\n"), "batch (line 14): give exactly one of: per_gpu, global"},
          {text({}, "batch: {global: 30}\n"), "batch.global (line 14): 30 does not split evenly over 4 GPUs"},
          {text({}, "backend: warp\n"), "backend (line 14): 'warp' is not one of: sim, real, emu"},
          {text({}, "name: [x]\n"), "name (line 14): expected a text value"},
          {text({}, "budget: {iterations: 3}\n"), "budget (line 14): this key is given twice"},
          {text({{"links", "links:\n  wan:\n    default: {mbps: 100, mbps: 50}\n"}}), "links.wan.default.mbps (line 6): this key is given twice"},
      },
      error_of);
}

TEST_F(ScenarioFile, MissingRequiredKeys) {
  expect_errors(
      {
          {text({{"model", ""}}), "top level (line 1): missing required key 'model'"},
          {text({{"dataset", ""}}), "missing required key 'dataset'"},
          {text({{"systems", ""}}), "missing required key 'systems'"},
          {text({{"target_accuracy", ""}}), "missing required key 'target_accuracy'"},
          {text({{"budget", ""}}), "missing required key 'budget'"},
          {text({{"clusters", ""}}), "missing required key 'clusters'"},
          {text({{"budget", "budget: {}\n"}}), "budget (line 13): give iterations, time_s or both"},
          {text({{"budget", "budget: {time_s: 0}\n"}}), "budget.time_s (line 13): is 0: with no iterations the run needs a time"},
          {text({{"clusters", "clusters:\n  - {nodes: 1}\n  - {name: b}\n"}}), "clusters[0] (line 2): missing required key 'name'"},
          {text({{"systems", "systems:\n  - {density: 0.1}\n  - ddp\n"}}), "systems[0] (line 10): missing required key 'name'"},
          {text({{"dataset", "dataset: {dir: /tmp}\n"}}), "dataset (line 8): missing required key 'name'"},
      },
      error_of);
}

TEST_F(ScenarioFile, UnknownSystemIsNamed) {
  expect_errors({{text({{"systems", "systems:\n  - horovod\n  - ddp\n"}}),
                  "systems[0] (line 10): 'horovod' is not one of: stellatrain, ddp, topk-sync, ddp-gloo"}},
                error_of);
}

// Clusters of different sizes: each node runs its own cluster's GPUs, and
// the global batch splits over all of them.
TEST_F(ScenarioFile, ClustersMayHaveDifferentGpuCounts) {
  const auto s = load_scenario(write(text({{"clusters", "clusters:\n  - {name: a, gpus_per_node: 1}\n"
                                                        "  - {name: b, nodes: 2, gpus_per_node: 3}\n"}},
                                          "batch: {global: 56}\n")));
  const auto& c = s.systems[0].config;
  EXPECT_EQ(c.node_gpus, (std::vector<int>{1, 3, 3}));
  EXPECT_EQ(c.total_workers(), 7);
  EXPECT_EQ(c.first_worker(2), 4);
  EXPECT_EQ(c.gpus_of(0), 1);
  EXPECT_EQ(c.batch_per_worker, 8u);  // 56 over 1 + 3 + 3 GPUs
  // Equal clusters keep the uniform form (manifests and results as before).
  EXPECT_TRUE(load_scenario(write(text())).systems[0].config.node_gpus.empty());
  expect_errors(
      {
          {text({{"clusters", "clusters:\n  - {name: a, gpus_per_node: 2}\n  - {name: b, gpus_per_node: 1}\n"}},
                "batch: {global: 32}\n"),
           "batch.global (line 14): 32 does not split evenly over 3 GPUs"},
          {text({{"clusters", "clusters:\n  - {name: a, profile: x.yaml, tflops: 10}\n  - {name: b}\n"}}),
           "clusters[0].tflops (line 2): give either profile (profile model) or tflops (analytic model)"},
      },
      error_of);
}

// A trace that is not shipped (third-party data) says where to get it.
TEST_F(ScenarioFile, AMissingTraceSaysWhereToGetIt) {
  expect_errors(
      {
          {text({{"links", "links:\n  wan:\n    default: {trace: nowhere.csv, if_missing: Download it from X., delay_ms: 20}\n"}}),
           "links.wan.default.trace (line 6): trace file "},
          {text({{"links", "links:\n  wan:\n    default: {trace: nowhere.csv, if_missing: Download it from X., delay_ms: 20}\n"}}),
           "nowhere.csv does not exist. Download it from X."},
          {text({{"links", "links:\n  wan:\n    default: {mbps: 100, if_missing: Download it from X.}\n"}}),
           "links.wan.default.if_missing (line 6): only applies to a trace file"},
      },
      error_of);
  // The shipped Starlink scenario names its source when the trace is absent.
  std::ifstream shipped(std::string(ST_SOURCE_DIR) + "/scenarios/real-starlink.yaml");
  std::stringstream content;
  content << shipped.rdbuf();
  std::string moved = content.str();
  const std::string shared = "../../shared/traces/real/";
  ASSERT_NE(moved.find(shared), std::string::npos);
  moved.replace(moved.find(shared), shared.size(), "no-such-folder/");
  const auto message = error_of(moved);
  EXPECT_NE(message.find("https://github.com/sys-uos/Starlink-on-the-Autobahn"), std::string::npos) << message;
  EXPECT_NE(message.find("stellatrain trace convert"), std::string::npos) << message;
}

TEST_F(ScenarioFile, YamlSyntaxErrorNamesTheLine) {
  const auto message = error_of(text({}, "eval: {interval: 5\n"));
  EXPECT_NE(message.find("scenario_test.yaml: line"), std::string::npos) << message;
}

#ifdef ST_HAVE_SIM
TEST_F(ScenarioFile, LinkAndComputeErrors) {
  const auto bad_trace = temp("scenario_test_bad_trace.csv");
  std::ofstream(bad_trace) << "time_s,mbps\n0,100\n1,fast\n";
  const auto profile = temp("scenario_test_profile.yaml");
  std::ofstream(profile) << "device: gpu-x\ncpu: {gather_ns_per_element: 1, compress_ns_per_element: 1, "
                            "optimize_ns_per_index: 1}\naccelerator: {optimize_dense_ns_per_element: 1, "
                            "compress_gpu_ns_per_element: 1}\nmodels:\n  cnn: {batch: 64, forward_ms: 1, backward_ms: 1}\n";
  const std::string profile_clusters = "clusters:\n  - {name: a, profile: scenario_test_profile.yaml}\n  - {name: b, profile: scenario_test_profile.yaml}\n";
  expect_errors(
      {
          {text({{"links", "links:\n  wan:\n    default: {trace: scenario_test_bad_trace.csv}\n"}}),
           "links.wan.default.trace (line 6): "},
          {text({{"links", "links:\n  wan:\n    default: {trace: scenario_test_bad_trace.csv}\n"}}), "scenario_test_bad_trace.csv:3: mbps 'fast' is not a number"},
          {text({{"links", "links:\n  wan:\n    default: {trace: no-such-trace.csv}\n"}}), "links.wan.default.trace (line 6)"},
          {text({{"links", "links:\n  wan:\n    default: {mbps: fast}\n"}}), "links.wan.default.mbps (line 6): 'fast' is not a number"},
          {text({{"links", "links:\n  wan:\n    default: {mbps: 100, delay_ms: -1}\n"}}), "links.wan.default.delay_ms (line 6): -1 is out of range"},
          {text({{"links", "links:\n  wan:\n    a->b: {mbps: 100}\n"}}), "links.wan (line 6): no entry for direction 'b->a'"},
          {text({{"links", "links:\n  wan:\n    a->c: {mbps: 100}\n"}}), "links.wan.a->c (line 6): no cluster named 'c'"},
          {text({{"links", "links:\n  wan:\n    default: {generator: {kind: zigzag}}\n"}}), "links.wan.default.generator"},
          {text({{"links", ""}}), "top level (line 1): missing required key 'links'"},
          {text({{"links", "links:\n  lan: {mbps: 1000}\n\n"}}), "links (line 5): missing required key 'wan'"},
          {text({{"clusters", "clusters:\n  - {name: a}\n\n"}}), "links.wan (line 6): a WAN needs at least two clusters"},
          {text({}, "compute: {model: magic}\n"), "compute.model (line 14): 'magic' is not one of"},
          {text({}, "compute: {model: profile}\n"), "compute (line 14): the profile model needs 'profile: FILE'"},
          {text({{"model", "model: mlp\n"}}, "compute: {model: profile, profile: scenario_test_profile.yaml}\n"),
           "no entry for model 'mlp'"},
          {text({{"clusters", profile_clusters}, {"model", "model: cnn\n"}}, "compute: {model: measured}\n"),
           "clusters[0].profile (line 2): only the profile compute model uses a profile"},
          {text({{"clusters", profile_clusters}, {"model", "model: cnn\n"}},
                "compute: {model: profile, profile: ../elsewhere.yaml}\n"),
           "compute.profile (line 14): differs from the clusters' profile"},
          {text({{"clusters", "clusters:\n  - {name: a, device: rtx3090}\n  - {name: b, device: rtx3090}\n"},
                 {"model", "model: cnn\n"}},
                "compute: {model: profile, profile: scenario_test_profile.yaml}\n"),
           "clusters[0].device (line 2): the compute profile"},
      },
      error_of);
  // A profile named by the clusters needs no compute section.
  const auto s = load_scenario(write(text({{"clusters", profile_clusters}, {"model", "model: cnn\n"}})));
  EXPECT_EQ(s.sim_compute->compute.kind, "profile");
  EXPECT_EQ(s.sim_compute->compute.profile_path, profile.string());
}
TEST_F(ScenarioFile, ClustersMayHaveTheirOwnComputeProfiles) {
  const auto fast = temp("scenario_test_fast.yaml"), slow = temp("scenario_test_slow.yaml");
  const std::string rest = "cpu: {gather_ns_per_element: 1, compress_ns_per_element: 1, optimize_ns_per_index: 1}\n"
                           "accelerator: {optimize_dense_ns_per_element: 1, compress_gpu_ns_per_element: 1}\n";
  std::ofstream(fast) << "device: fast\n" << rest << "models:\n  mlp: {batch: 64, forward_ms: 4, backward_ms: 6}\n";
  std::ofstream(slow) << "device: slow\n" << rest << "models:\n  mlp: {batch: 64, forward_ms: 10, backward_ms: 15}\n";
  const auto s = load_scenario(write(text({{"clusters",
      "clusters:\n  - {name: a, nodes: 2, gpus_per_node: 2, device: fast, profile: scenario_test_fast.yaml}\n"
      "  - {name: b, nodes: 1, gpus_per_node: 2, device: slow, profile: scenario_test_slow.yaml}\n"}})));
  ASSERT_TRUE(s.sim_compute);
  EXPECT_EQ(s.sim_compute->compute.node_profiles, (std::vector<std::string>{fast.string(), fast.string(), slow.string()}));
  expect_errors(
      {
          {text({{"clusters", "clusters:\n  - {name: a, gpus_per_node: 2, profile: scenario_test_fast.yaml}\n"
                              "  - {name: b, gpus_per_node: 2}\n"}}),
           "clusters[1] (line 3): another cluster names its own profile: give every cluster one"},
          {text({{"clusters", "clusters:\n  - {name: a, gpus_per_node: 2, device: slow, profile: scenario_test_fast.yaml}\n"
                              "  - {name: b, gpus_per_node: 2, profile: scenario_test_slow.yaml}\n"}}),
           "clusters[0].device (line 2): the compute profile"},
          {text({{"clusters", "clusters:\n  - {name: a, gpus_per_node: 2, tflops: 10}\n  - {name: b, gpus_per_node: 2}\n"}}),
           "clusters[0] (line 2): tflops needs compute.model: analytic"},
      },
      error_of);
}

#endif

}  // namespace
}  // namespace st::apps
