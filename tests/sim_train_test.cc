// The real engine inside ns-3: training runs on the sim backend (virtual
// time, trace-driven WAN), results are deterministic under the profile
// model, and the CNN reaches 85% with stellatrain and ddp over a
// fluctuating 115 Mbps-mean WAN (about 2 minutes per system here).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <sstream>

#include "core/train/run/backend.h"
#include "core/train/run/trainer.h"
#include "sim/sim_backend.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"
#include "traces/generators.h"


namespace st::sim {
namespace {

namespace fs = std::filesystem;

// 2 clusters x 1 node; the WAN replays a seeded AR(1) trace (115 Mbps mean,
// 1 s steps) in both directions, 20 ms one way.
SimRunConfig two_clusters(const std::string& compute_model = "profile") {
  traces::GeneratorSpec spec;
  spec.kind = "ar1";
  spec.parameters = {{"mean", 115}, {"spread", 40}, {"correlation", 0.8}, {"floor", 20}};
  spec.duration_s = 600;
  spec.seed = 7;
  const auto a_to_b = net::testing::traced_link(traces::generate(spec));
  spec.seed = 8;
  const auto b_to_a = net::testing::traced_link(traces::generate(spec));
  return testing::sim_run(net::testing::two_clusters(a_to_b, b_to_a), compute_model);
}

train::TrainConfig cnn_config(const std::string& system, int iterations) {
  auto c = train::cnn_config(system);
  c.iterations = iterations;
  c.eval_interval = 50;
  c.eval_samples = 2000;
  return c;
}

using net::testing::read_file;

// Trains each system twice on `sim` into root/SYSTEM/{0,1}: iterations take
// time, both nodes end with the same parameters, and the two runs write the
// same files.
void expect_identical_reruns(const SimRunConfig& sim, const fs::path& root, int iterations) {
  fs::remove_all(root);
  for (const char* system : {"stellatrain", "ddp"}) {
    for (int run = 0; run < 2; ++run) {
      auto c = cnn_config(system, iterations);
      c.dataset = "synthetic";
      c.eval_interval = 4;
      c.eval_samples = 200;
      c.out_dir = (root / system / std::to_string(run)).string();
      auto backend = make_sim_node_host(sim, c);
      const auto result = train::run_training(c, *backend);
      EXPECT_EQ(result.checksums[0], result.checksums[1]);
      EXPECT_GT(result.mean_iteration_ms, 0) << system;
    }
    for (const char* file : {"manifest.json", "iterations.csv", "eval.csv", "link.csv"}) {
      const auto first = read_file(root / system / "0" / file), second = read_file(root / system / "1" / file);
      EXPECT_FALSE(first.empty()) << system << " " << file;
      EXPECT_EQ(first, second) << system << ": " << file << " differs between two identical runs";
    }
  }
}

TEST(SimTraining, ProfileModelRunsAreByteIdentical) {
  expect_identical_reruns(two_clusters(), fs::path(::testing::TempDir()) / "sim_determinism", 12);
}

TEST(SimTraining, ManifestRecordsTheBackend) {
  auto c = cnn_config("stellatrain", 3);
  c.dataset = "synthetic";
  c.eval_interval = 0;
  c.eval_samples = 100;
  c.out_dir = (fs::path(::testing::TempDir()) / "sim_manifest").string();
  fs::remove_all(c.out_dir);
  auto backend = make_sim_node_host(two_clusters(), c);
  train::run_training(c, *backend);
  const auto manifest = nlohmann::json::parse(read_file(fs::path(c.out_dir) / "manifest.json"));
  EXPECT_EQ(manifest["backend"], "sim");
  EXPECT_EQ(manifest["compute_time_model"]["kind"], "profile");
  // One CPU-core count and its origin per node.
  ASSERT_TRUE(manifest["cpu_cores_per_node"].is_array());
  EXPECT_EQ(manifest["cpu_cores_per_node"].size(), manifest["cpu_cores_from"].size());
  EXPECT_EQ(manifest["cpu_cores_per_node"].size(), static_cast<std::size_t>(c.nodes));
  EXPECT_GE(manifest["network"]["mtu"].get<int>(), 1500);
  EXPECT_TRUE(manifest["topology"]["wan"].contains("a->b"));
  EXPECT_GT(manifest["summary"]["wan_bytes"].get<double>(), 0);
  EXPECT_GT(manifest["summary"]["simulated_s"].get<double>(), 0);
  EXPECT_TRUE(fs::exists(fs::path(c.out_dir) / "host_cost.json"));
}

// links.model: flow trains every system on the flow-level network, gives
// the same results on a rerun, and says so in the manifest.
TEST(SimTraining, TheFlowModelTrainsDeterministicallyAndSaysSo) {
  auto config = two_clusters();
  config.topology.model = net::NetworkModel::flow;
  const fs::path root = fs::path(::testing::TempDir()) / "sim_flow";
  expect_identical_reruns(config, root, 4);
  for (const char* system : {"stellatrain", "ddp"}) {
    const auto manifest = nlohmann::json::parse(read_file(root / system / "0" / "manifest.json"));
    EXPECT_EQ(manifest["network"]["model"], "flow");
    EXPECT_NE(manifest["simulator"].get<std::string>().find("flow-level model"), std::string::npos);
    EXPECT_GT(manifest["summary"]["wan_bytes"].get<double>(), 0);
  }
}

TEST(SimTraining, DdpGlooIsRefusedWithAReason) {
  auto c = cnn_config("ddp-gloo", 3);
  c.dataset = "synthetic";
  auto backend = make_sim_node_host(two_clusters(), c);
  try {
    train::run_training(c, *backend);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ddp-gloo"), std::string::npos);
  }
}

class SimAccuracy : public ::testing::TestWithParam<std::string> {};

TEST_P(SimAccuracy, CnnOnFashionMnistReaches85PercentOverA115MbpsTrace) {
  // stellatrain reached 85.2% at 600 iterations here (density 5% and
  // staleness 1 converge slower per iteration; the paper saw the same):
  // 800 leaves a margin for other CPUs' floating-point paths.
  auto c = cnn_config(GetParam(), GetParam() == "stellatrain" ? 800 : 600);
  c.eval_interval = 200;  // "reaches": the best evaluation counts, as for TTA
  c.eval_samples = 0;     // the whole test set
  c.out_dir = (fs::path(::testing::TempDir()) / ("sim_accuracy_" + GetParam())).string();
  fs::remove_all(c.out_dir);
  auto backend = make_sim_node_host(two_clusters(), c);
  const auto result = train::run_training(c, *backend);
  ASSERT_FALSE(result.evaluations.empty());
  double best = 0;
  for (const auto& e : result.evaluations) {
    EXPECT_EQ(e.samples, 10000u);
    best = std::max(best, e.accuracy);
  }
  EXPECT_GE(best, 0.85);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
  for (const char* file : {"manifest.json", "iterations.csv", "eval.csv", "link.csv", "host_cost.json"})
    EXPECT_TRUE(fs::exists(fs::path(c.out_dir) / file)) << file;
  std::cout << GetParam() << ": best accuracy " << best << ", final " << result.evaluations.back().accuracy << ", simulated " << result.wall_s
            << " s, host cost " << backend->host_cost().dump() << "\n";
}

INSTANTIATE_TEST_SUITE_P(Systems, SimAccuracy, ::testing::Values("stellatrain", "ddp"));

}  // namespace
}  // namespace st::sim
