// Timing mode on the sim backend (docs/sim.md): forward and backward math
// skipped, synthetic gradients, everything else real. Its iteration times
// must reproduce full-math runs, it must never report an accuracy, and the
// profile model's measured per-layer readiness (`layers:`) is validated.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/train/run/trainer.h"
#include "sim/compute_model.h"
#include "core/train/run/real_backend.h"
#include "sim/sim_backend.h"
#include "tests/csv_test_util.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"


namespace st::sim {
namespace {

namespace fs = std::filesystem;

SimRunConfig constant_wan(double mbps) {
  return testing::sim_run(net::testing::two_clusters(net::testing::constant_link(mbps)));
}

train::TrainConfig cnn(const std::string& system, const std::string& math) {
  auto c = train::cnn_config(system);
  c.dataset = "synthetic";
  c.iterations = 16;
  c.eval_samples = 200;
  c.math = math;
  return c;
}

double mean_iteration_ms(const train::TrainConfig& config) {
  auto backend = make_sim_node_host(constant_wan(115), config);
  return train::run_training(config, *backend).mean_iteration_ms;
}

class TimingMatchesFullMath : public ::testing::TestWithParam<std::string> {};

// The compute model prices the skipped math exactly as it priced the real
// one, and the synthetic gradients make the compressors send what real ones
// make them send, so the iteration time agrees within 2%.
TEST_P(TimingMatchesFullMath, CnnIterationTimeWithinTwoPercent) {
  const double full = mean_iteration_ms(cnn(GetParam(), "full"));
  const double timing = mean_iteration_ms(cnn(GetParam(), "timing"));
  std::cout << GetParam() << ": full math " << full << " ms, timing " << timing << " ms per iteration\n";
  EXPECT_NEAR(timing / full, 1.0, 0.02) << GetParam() << ": full " << full << " ms, timing " << timing << " ms";
}

INSTANTIATE_TEST_SUITE_P(Systems, TimingMatchesFullMath, ::testing::Values("stellatrain", "ddp", "topk-sync"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// The same for ResNet-18 (11.2M parameters, 2 nodes x 1 worker, CIFAR-10-
// shaped synthetic data, the profile's resnet18 entry): a model whose
// per-layer readiness and traffic are far from the CNN's.
TEST(TimingMatchesFullMathResNet18, IterationTimeWithinTwoPercent) {
  for (const char* system : {"stellatrain", "ddp"}) {
    auto config = [&](const std::string& math) {
      auto c = cnn(system, math);
      c.model = "resnet18";
      c.synthetic_channels = 3, c.synthetic_height = 32, c.synthetic_width = 32;
      c.gpus_per_node = 1;
      c.iterations = 5;
      return c;
    };
    const double full = mean_iteration_ms(config("full"));
    const double timing = mean_iteration_ms(config("timing"));
    std::cout << "resnet18 " << system << ": full math " << full << " ms, timing " << timing << " ms per iteration\n";
    EXPECT_NEAR(timing / full, 1.0, 0.02) << system;
  }
}

TEST(TimingMode, ReportsNoAccuracyAndIsDeterministic) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_timing";
  fs::remove_all(root);
  std::vector<uint64_t> checksums;
  for (int run = 0; run < 2; ++run) {
    auto c = cnn("stellatrain", "timing");
    c.iterations = 6;
    c.out_dir = (root / std::to_string(run)).string();
    auto backend = make_sim_node_host(constant_wan(115), c);
    const auto result = train::run_training(c, *backend);
    EXPECT_TRUE(result.evaluations.empty());
    checksums.push_back(result.checksums[0]);
  }
  EXPECT_EQ(checksums[0], checksums[1]);
  std::ifstream in(root / "0" / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  const auto& summary = manifest["summary"];
  EXPECT_EQ(summary["math"], "timing");
  EXPECT_FALSE(summary.contains("final_accuracy"));
  EXPECT_EQ(summary["iterations_completed"], 6);
  EXPECT_GT(summary["wan_bytes"].get<double>(), 0);
}

TEST(TimingMode, RefusesTheMeasuredModelAndTheRealBackend) {
  auto c = cnn("ddp", "timing");
  auto sim = constant_wan(115);
  sim.compute.compute.kind = "measured";
  EXPECT_THROW(make_sim_node_host(sim, c), std::invalid_argument);
  EXPECT_THROW(SimBackend(sim).train(c), std::invalid_argument);
  EXPECT_THROW(train::RealBackend().train(c), std::invalid_argument);
}

// A timeline records; it never changes what is simulated: the same run with
// and without one gives bitwise the same models and iteration times, and the
// timeline's spans are on virtual time.
TEST(TimelineInSim, ChangesNothingThatIsSimulated) {
  auto c = cnn("stellatrain", "timing");
  c.iterations = 6;
  c.out_dir = (fs::path(::testing::TempDir()) / "sim_timeline_off").string();
  fs::remove_all(c.out_dir);
  auto plain_backend = make_sim_node_host(constant_wan(115), c);
  const auto plain = train::run_training(c, *plain_backend);
  plain_backend.reset();  // one sim backend at a time per process
  c.out_dir = (fs::path(::testing::TempDir()) / "sim_timeline_on").string();
  fs::remove_all(c.out_dir);
  c.timeline = true;
  auto timed_backend = make_sim_node_host(constant_wan(115), c);
  const auto timed = train::run_training(c, *timed_backend);
  EXPECT_EQ(timed.checksums, plain.checksums);
  EXPECT_EQ(timed.mean_iteration_ms, plain.mean_iteration_ms);
  std::ifstream in(fs::path(c.out_dir) / "timeline.json");
  const auto trace = nlohmann::json::parse(in);
  double last_end_us = 0;
  std::size_t sends = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    last_end_us = std::max(last_end_us, e["ts"].get<double>() + e["dur"].get<double>());
    sends += e["cat"] == "send";
  }
  EXPECT_GT(sends, 0u);
  // Virtual time: the spans end within the run's simulated duration (plus
  // the last sends' completions), far from any wall-clock reading.
  EXPECT_LE(last_end_us / 1e3, plain.mean_iteration_ms * (c.iterations + 2));
}

// A profile's per-layer readiness must list the model's parameters by name,
// in order; mistakes are reported with the file and line.
TEST(ProfileLayers, WrongNameOrCountNamesTheLine) {
  const fs::path dir = fs::path(::testing::TempDir()) / "profile_layers";
  fs::create_directories(dir);
  auto write = [&](const std::string& layers) {
    const fs::path path = dir / "p.yaml";
    std::ofstream(path) << "device: t\nmeasured_with: test\n"
                           "cpu: {gather_ns_per_element: 1, compress_ns_per_element: 1, optimize_ns_per_index: 1}\n"
                           "accelerator: {optimize_dense_ns_per_element: 1, compress_gpu_ns_per_element: 1}\n"
                           "models:\n  mlp:\n    batch: 64\n    forward_ms: 1\n    backward_ms: 2\n    layers:\n"
                        << layers;
    ComputeModelConfig c;
    c.kind = "profile";
    c.profile_path = path.string();
    c.model = "mlp";
    return c;
  };
  const std::string good =
      "      - {name: fc1.weight, backward_ready_ms: 2}\n      - {name: fc1.bias, backward_ready_ms: 1.5}\n"
      "      - {name: fc2.weight, backward_ready_ms: 0.5}\n      - {name: fc2.bias, backward_ready_ms: 0.2}\n";
  const auto model = make_compute_model(write(good));
  runtime::ComputeCost backward{runtime::TaskKind::kBackward, -1, 64, 0, 0};
  EXPECT_DOUBLE_EQ(model->progress_share(backward, 2, 0.9), 0.25);  // 0.5 of 2 ms, whatever was measured
  EXPECT_DOUBLE_EQ(model->progress_share(backward, 0, 0.1), 1.0);
  try {
    make_compute_model(write("      - {name: fc9.weight, backward_ready_ms: 2}\n"));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("line"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 parameters"), std::string::npos) << e.what();
  }
  std::string renamed = good;
  renamed.replace(renamed.find("fc2.weight"), 10, "fc2.wrong");
  try {
    make_compute_model(write(renamed));
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("fc2.weight"), std::string::npos) << e.what();
  }
}

// Column `name` of iterations.csv, row by row.
std::vector<double> column(const fs::path& csv, const std::string& name) {
  return st::testing::read_csv(csv).numbers(name);
}

// Loading the replicas costs simulated time on the forward's path: the
// read out of the master (a plain copy, or a pass through the view where
// stellatrain's lookahead extrapolates), then each replica's host copy and
// transfer. The first iteration has nothing to contend with, so its
// load_ms is exactly the analytic price.
TEST(EveryStagePriced, LoadsCostTheirBytesBeforeTheForward) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_priced_loads";
  fs::remove_all(root);
  struct Case {
    std::string name, system, compensation;
    double read_bytes;  // per element
  };
  for (const Case& run : {Case{"ddp", "ddp", "", 8}, Case{"stellatrain", "stellatrain", "none", 8},
                          Case{"lookahead", "stellatrain", "lookahead", 16}}) {
    auto c = cnn(run.system, "timing");
    if (!run.compensation.empty()) {
      ASSERT_TRUE(train::set_option(c, "compensation", run.compensation));
    }
    c.iterations = 3;
    c.out_dir = (root / run.name).string();
    auto sim = testing::sim_run(net::testing::two_clusters(net::testing::constant_link(115)), "analytic");
    sim.compute.compute.cpu_gbps = 1;
    sim.compute.compute.h2d_gbps = 1;
    auto backend = make_sim_node_host(sim, c);
    const auto result = train::run_training(c, *backend);
    double numel = 0;
    for (const auto& layer : result.final_parameters) numel += static_cast<double>(layer.size());
    // The read, then 8 bytes of host copy and 4 of transfer, at 1 GB/s.
    const double expected_ms = numel * (run.read_bytes + 8 + 4) * 1e-6;
    const auto load = column(root / run.name / "iterations.csv", "load_ms");
    ASSERT_EQ(load.size(), 3u) << run.name;
    EXPECT_NEAR(load[0], expected_ms, 0.002) << run.name;
    for (double ms : load) EXPECT_GE(ms, expected_ms - 0.002) << run.name;
  }
}

// A GPU profile's `transfer:` rates: a layer's gather also pays its
// device-to-host copy (4 bytes per element at d2h_gbps).
TEST(ProfileTransfer, GatherPaysTheDeviceToHostCopy) {
  const fs::path dir = fs::path(::testing::TempDir()) / "profile_transfer";
  fs::create_directories(dir);
  auto model_with = [&](const std::string& transfer) {
    const fs::path path = dir / "p.yaml";
    std::ofstream(path) << "device: t\nmeasured_with: test\ncompute_device: cuda:0\n"
                           "cpu: {gather_ns_per_element: 1, compress_ns_per_element: 1, optimize_ns_per_index: 1}\n"
                           "accelerator: {optimize_dense_ns_per_element: 1, compress_gpu_ns_per_element: 1}\n"
                        << transfer << "models:\n  mlp: {batch: 64, forward_ms: 1, backward_ms: 2}\n";
    ComputeModelConfig c;
    c.kind = "profile";
    c.profile_path = path.string();
    c.model = "mlp";
    return make_compute_model(c);
  };
  const runtime::ComputeCost gather{runtime::TaskKind::kGather, 0, 1e6, 0, -1};
  const auto host = model_with("")->cost(gather, runtime::Nanos::zero());
  const auto gpu = model_with("transfer: {d2h_gbps: 20, h2d_gbps: 25}\n")->cost(gather, runtime::Nanos::zero());
  EXPECT_EQ(host.count(), 1'000'000);                      // 1 ns per element
  EXPECT_EQ(gpu.count(), 1'000'000 + 4'000'000 / 20);      // + 4 bytes at 20 bytes per ns
  try {
    model_with("transfer: {d2h_gbps: 0, h2d_gbps: 25}\n");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("transfer.d2h_gbps"), std::string::npos) << e.what();
  }
}

// Without `layers:`, readiness follows FLOPs: the classifier's gradient
// comes early in backward, the first layer's at the very end.
TEST(ProfileLayers, FlopsOrderWithoutATable) {
  ComputeModelConfig c;
  c.kind = "analytic";
  c.model = "cnn";
  const auto model = make_compute_model(c);
  runtime::ComputeCost backward{runtime::TaskKind::kBackward, -1, 64, 0, 0};
  const double first = model->progress_share(backward, 0, 0.5);
  const double classifier = model->progress_share(backward, 6, 0.5);
  EXPECT_DOUBLE_EQ(first, 1.0);
  EXPECT_LT(classifier, 0.2);
  EXPECT_GT(classifier, 0.0);
}

}  // namespace
}  // namespace st::sim
