// Sampled CPU stages against full-size stages on the sim backend (docs/sim-compute.md,
// "Sampled stages"): the same timing run with every stage at full size and
// with the stages on samples must give the same iteration times and WAN
// bytes within 3%, on the flow-level network and on ns-3's packets; the
// option must be refused wherever it could not hold (a run that measures
// accuracy, a system that does not size its wire by the full layers).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "core/train/run/trainer.h"
#include "sim/sim_backend.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"

namespace st::sim {
namespace {

namespace fs = std::filesystem;

// Forward and backward priced as on an RTX 3090 (the paper scenarios'
// analytic model), so that the CPU stages and the WAN decide the iteration.
SimRunConfig wan(net::NetworkModel model) {
  auto c = testing::sim_run(net::testing::two_clusters(net::testing::constant_link(115)), "analytic");
  c.compute.compute.device_tflops = 35.6;
  c.compute.compute.device_gbps = 936;
  c.compute.compute.cpu_gbps = 5;
  c.topology.model = model;
  return c;
}

// ResNet-18 (11.2M parameters) on CIFAR-shaped data, 2 nodes x 2 workers:
// layers from 64 to 2.4M elements, so small ones stay whole and large
// ones are sampled 1 in 16.
train::TrainConfig resnet18(const std::string& system, double sample) {
  auto c = train::cnn_config(system);
  c.dataset = "synthetic";
  c.model = "resnet18";
  c.synthetic_channels = 3, c.synthetic_height = 32, c.synthetic_width = 32;
  c.gpus_per_node = 2;
  c.iterations = 6;
  c.math = "timing";
  c.quiet = true;
  c.stage_sample.fraction = sample;
  return c;
}

train::TrainResult run(const train::TrainConfig& config, net::NetworkModel model) {
  auto backend = make_sim_node_host(wan(model), config);
  return train::run_training(config, *backend);
}

struct Case {
  std::string system;
  net::NetworkModel model;
};

class SampledStages : public ::testing::TestWithParam<Case> {};

TEST_P(SampledStages, IterationTimeAndBytesWithinThreePercentOfFullStages) {
  const auto& [system, model] = GetParam();
  const auto full = run(resnet18(system, 0), model);
  const auto sampled = run(resnet18(system, 1.0 / 16), model);
  std::cout << system << " (" << net::network_model_name(model) << "): full stages " << full.mean_iteration_ms
            << " ms, " << full.bytes_sent << " B; sampled " << sampled.mean_iteration_ms << " ms, "
            << sampled.bytes_sent << " B per run; host " << full.host_cost.value("wall_s", 0.0) << " -> "
            << sampled.host_cost.value("wall_s", 0.0) << " s\n";
  EXPECT_NEAR(sampled.mean_iteration_ms / full.mean_iteration_ms, 1.0, 0.03);
  EXPECT_NEAR(static_cast<double>(sampled.bytes_sent) / static_cast<double>(full.bytes_sent), 1.0, 0.03);
}

INSTANTIATE_TEST_SUITE_P(Systems, SampledStages,
                         ::testing::Values(Case{"stellatrain", net::NetworkModel::flow},
                                           Case{"ddp", net::NetworkModel::flow},
                                           Case{"topk-sync", net::NetworkModel::flow},
                                           Case{"stellatrain", net::NetworkModel::packet}),
                         [](const auto& info) {
                           std::string name = info.param.system + "_" + net::network_model_name(info.param.model);
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// The manifest and summary say the stages were sampled; a rerun is
// byte-identical, as every simulated run is.
TEST(SampledStagesRun, SaysSoAndRerunsIdentically) {
  const fs::path root = fs::path(::testing::TempDir()) / "sampled_stages";
  auto config = resnet18("stellatrain", 1.0 / 16);
  config.iterations = 3;
  std::string first;
  for (const char* name : {"a", "b"}) {
    config.out_dir = (root / name).string();
    run(config, net::NetworkModel::flow);
    std::ifstream in(root / name / "iterations.csv");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty());
    if (first.empty()) first = text;
    else EXPECT_EQ(text, first);
  }
  const auto manifest = nlohmann::json::parse(std::ifstream(root / "a" / "manifest.json"));
  EXPECT_DOUBLE_EQ(manifest["stage_sample"]["fraction"].get<double>(), 1.0 / 16);
  EXPECT_EQ(manifest["stage_sample"]["min_elements"].get<std::size_t>(), 4096u);
  EXPECT_DOUBLE_EQ(manifest["summary"]["stage_sample"].get<double>(), 1.0 / 16);
}

void expect_refused(const train::TrainConfig& config, const std::string& says) {
  try {
    run(config, net::NetworkModel::flow);
    FAIL() << "expected an error saying " << says;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what() << "\n(expected: " << says << ")";
  }
}

TEST(SampledStagesRun, RefusedWhereItCouldNotHold) {
  auto full_math = resnet18("stellatrain", 0.1);
  full_math.math = "full";
  expect_refused(full_math, "stage_sample samples only timing runs");
  expect_refused(resnet18("ddp-powersgd", 0.1), "ddp-powersgd does not run its stages on samples");
  expect_refused(resnet18("local-sgd", 0.1), "systems that do: stellatrain, ddp, topk-sync");
  auto floor = resnet18("stellatrain", 0.1);
  floor.stage_sample.min_elements = 8;
  expect_refused(floor, "stage_sample.min_elements 8 is below one block");
}

}  // namespace
}  // namespace st::sim
