// Clusters with different GPU counts (TrainConfig::node_gpus; a scenario's
// per-cluster gpus_per_node): a node of 1 GPU beside a node of 3.
//   * Where an algorithm averages over every GPU's samples it computes what
//     the same 4 workers compute as 2 + 2: ddp, and local-sgd and blocking
//     cloudless-ma averaging every step (which weigh each node by its GPUs).
//   * In the simulator every system trains on 1 + 3 and reruns
//     byte-identically; stellatrain's controller splits the global batch
//     over the four GPUs by their measured speed (the 1-GPU node's GPU is
//     2.5x faster here), keeping the global batch.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/train/run/trainer.h"
#include "sim/sim_backend.h"
#include "tests/csv_test_util.h"
#include "tests/free_port.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"
#include "traces/generators.h"

namespace st::train {
namespace {

namespace fs = std::filesystem;

TrainConfig one_plus_three(const std::string& system) {
  auto c = small_config(system);
  c.iterations = 12;
  c.node_gpus = {1, 3};
  return c;
}

TEST(UnequalClusters, DdpOnOnePlusThreeIsDdpOnTwoPlusTwo) {
  auto unequal = one_plus_three("ddp");
  auto equal = small_config("ddp");
  equal.iterations = unequal.iterations;
  // The same four workers read the same shards either way; only the order
  // in which their gradients are summed differs.
  const auto a = train_real(unequal), b = train_real(equal);
  const double difference = max_relative_difference(a.final_parameters, b.final_parameters);
  std::printf("ddp 1+3 vs 2+2: max relative difference %.3g\n", difference);
  EXPECT_LE(difference, 1e-5);
  EXPECT_EQ(a.checksums[0], a.checksums[1]);
}

// PyTorch's own c10d stack over Gloo on 1 + 3: the bucketed engine on both
// ranks, the sum divided by all four workers.
TEST(UnequalClusters, DdpGlooComputesWhatDdpComputes) {
#ifdef ST_WITHOUT_DDP_GLOO
  GTEST_SKIP() << "ddp-gloo is not in this build (ST_WITH_DDP_GLOO=OFF)";
#endif
  const auto ddp = train_real(one_plus_three("ddp"));
  auto c = one_plus_three("ddp-gloo");
  c.master_port = st::test::free_port();
  c.peer_timeout_s = 30;
  const auto gloo = train_real(c);
  ASSERT_EQ(gloo.checksums.size(), 2u);
  EXPECT_EQ(gloo.checksums[0], gloo.checksums[1]);
  const double difference = max_relative_difference(gloo.final_parameters, ddp.final_parameters);
  std::printf("ddp-gloo vs ddp on 1+3: max relative difference %.3g\n", difference);
  EXPECT_LE(difference, 1e-4);
}

// Averaging models after every node's step is averaging gradients, if each
// node weighs as many GPUs as it has (plain node means would give the one
// GPU a third of the say it should have, which this would catch).
TEST(UnequalClusters, ModelAveragingEveryStepIsDdp) {
  const auto ddp = train_real(one_plus_three("ddp"));
  auto local = one_plus_three("local-sgd");
  local.options_as<LocalSgdOptions>().averaging_period = 1;
  auto ma = one_plus_three("cloudless-ma");
  ma.options_as<CloudlessMaOptions>().averaging_period = 1;
  ma.options_as<CloudlessMaOptions>().overlap = false;
  for (const auto* c : {&local, &ma}) {
    const auto averaged = train_real(*c);
    const double difference = max_relative_difference(averaged.final_parameters, ddp.final_parameters);
    std::printf("%s (every step) vs ddp on 1+3: max relative difference %.3g\n", c->system.c_str(), difference);
    EXPECT_LE(difference, 1e-5) << c->system;
  }
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class UnequalClustersInSim : public ::testing::TestWithParam<std::string> {};

TEST_P(UnequalClustersInSim, TrainsAndRerunsByteIdentically) {
  std::string name = GetParam();
  std::replace(name.begin(), name.end(), '-', '_');
  const fs::path root = fs::path(::testing::TempDir()) / ("unequal_" + name);
  fs::remove_all(root);
  double accuracy = 0;
  for (int run = 0; run < 2; ++run) {
    auto c = one_plus_three(GetParam());
    c.iterations = 24;
    c.eval_samples = 500;
    set_option(c, "averaging_period", "4");
    set_option(c, "accumulation_steps", "2");
    set_option(c, "max_staleness", "4");
    c.out_dir = (root / std::to_string(run)).string();
    auto network = sim::testing::sim_run(net::testing::two_clusters(net::testing::traced_link(traces::constant_trace(115, 3600))));
    auto backend = sim::make_sim_node_host(network, c);
    const auto result = run_training(c, *backend);
    accuracy = result.evaluations.back().accuracy;
  }
  for (const char* file : {"manifest.json", "iterations.csv", "eval.csv", "link.csv"}) {
    const auto first = read_file(root / "0" / file), second = read_file(root / "1" / file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_EQ(first, second) << file << " differs between two identical runs";
  }
  EXPECT_EQ(nlohmann::json::parse(read_file(root / "0" / "manifest.json")).at("node_gpus"), nlohmann::json({1, 3}));
  EXPECT_GT(accuracy, 0.3) << GetParam() << " learns on 1 + 3 GPUs (chance 0.1)";
}

INSTANTIATE_TEST_SUITE_P(Systems, UnequalClustersInSim,
                         ::testing::Values("stellatrain", "ddp", "topk-sync", "ddp-fp16", "ddp-powersgd", "local-sgd",
                                           "cloudless-ma", "cloudless-asgd-ga"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// The last line of control.csv's batch column, per node and GPU.
std::vector<std::vector<int>> last_batches(const fs::path& control_csv) {
  const auto batches = st::testing::read_csv(control_csv).texts("batch");
  if (batches.empty()) return {};
  return st::testing::parse_batch_cell(batches.back());
}

TEST(UnequalClustersControl, TheBatchSplitFollowsEachGpusSpeed) {
  const fs::path root = fs::path(::testing::TempDir()) / "unequal_control";
  const auto fast = sim::testing::mlp_at_cnn_pace(root, 1.0), slow = sim::testing::mlp_at_cnn_pace(root, 2.5);
  for (int run = 0; run < 2; ++run) {
    auto c = one_plus_three("stellatrain");
    c.iterations = 200;
    c.batch_per_worker = 64;
    stellatrain_options(c).controller = true;
    stellatrain_options(c).control.adapt_batch = true;
    c.out_dir = (root / std::to_string(run)).string();
    fs::remove_all(c.out_dir);
    auto network = sim::testing::sim_run(
        net::testing::two_clusters(net::testing::traced_link(traces::constant_trace(1000, 600))), "profile",
        fast.string());
    network.compute.compute.node_profiles = {fast.string(), slow.string()};  // the 1-GPU node is 2.5x faster
    auto backend = sim::make_sim_node_host(network, c);
    run_training(c, *backend);
  }
  for (const char* file : {"iterations.csv", "control.csv", "eval.csv"})
    EXPECT_EQ(read_file(root / "0" / file), read_file(root / "1" / file)) << file << " differs on rerun";
  const auto batches = last_batches(root / "0" / "control.csv");
  ASSERT_EQ(batches.size(), 2u);
  ASSERT_EQ(batches[0].size(), 1u);
  ASSERT_EQ(batches[1].size(), 3u);
  int total = 0;
  for (const auto& node : batches)
    for (int b : node) total += b;
  EXPECT_EQ(total, 4 * 64) << "the global batch is kept";
  // Per-GPU compute time, batch x ms per sample: within 10% of each other.
  const double fast_ms = batches[0][0] * 1.0, slow_ms = *std::max_element(batches[1].begin(), batches[1].end()) * 2.5;
  std::printf("batches %d | %d;%d;%d: compute %.0f / %.0f (fast / slowest, in fast-sample units)\n", batches[0][0],
              batches[1][0], batches[1][1], batches[1][2], fast_ms, slow_ms);
  EXPECT_LE(std::max(fast_ms, slow_ms) / std::min(fast_ms, slow_ms), 1.10);
}

}  // namespace
}  // namespace st::train
