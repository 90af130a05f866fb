// The systems whose clusters step on their own (local-sgd, cloudless-ma,
// cloudless-asgd-ga; docs/systems.md) on the in-process transport: where
// their algorithms reduce to synchronous training they compute what ddp
// computes, they learn, and on a slow link the overlapped model averaging
// skips periods instead of stalling.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/train/run/trainer.h"
#include "tests/train_test_util.h"

namespace st::train {
namespace {

namespace fs = std::filesystem;

// The shared small run, 12 iterations (a multiple of the averaging period
// 3 used below, so the last iteration ends a round).
TrainConfig small_config_of(const std::string& system) {
  auto c = small_config(system);
  c.iterations = 12;
  return c;
}

nlohmann::json summary_of(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  return nlohmann::json::parse(in).at("summary");
}

// Bound for two paths that do the same float operations in the same order.
// Debian's LibTorch gives bit-identical parameters; pip's LibTorch 2.11 (run
// on a GPU machine, scripts/gpu/check.sh) left 1.8e-7 relative: its CPU
// kernels round some of these operations differently. A few float ulps, far
// below what a wrong sum or a missed step would leave.
constexpr double kSameArithmetic = 1e-6;

std::string fresh_dir(const std::string& name) {
  const auto dir = fs::path(::testing::TempDir()) / ("st-systems-" + name);
  fs::remove_all(dir);
  return dir.string();
}

TEST(LocalSgd, AveragingEveryStepEqualsDdp) {
  auto c = small_config_of("local-sgd");
  c.options_as<LocalSgdOptions>().averaging_period = 1;
  const auto local = train_real(c);
  c.use_system("ddp");
  const auto ddp = train_real(c);
  // Averaging the models after each node's momentum step is averaging the
  // gradients (the step is linear in them); only float rounding differs.
  const double difference = max_relative_difference(local.final_parameters, ddp.final_parameters);
  EXPECT_LE(difference, 1e-5);
  std::printf("local-sgd (period 1) vs ddp: max relative difference %.3g\n", difference);
}

TEST(LocalSgd, WarmupIterationsAreDdpIterations) {
  auto c = small_config_of("local-sgd");
  c.options_as<LocalSgdOptions>().start_iteration = c.iterations;  // never leaves the warmup
  c.options_as<LocalSgdOptions>().averaging_period = 5;
  const auto warm = train_real(c);
  c.use_system("ddp");
  const auto ddp = train_real(c);
  // The warmup sums gradients with one flat ring allreduce, ddp per bucket:
  // with two nodes every element is the same single float addition.
  EXPECT_LE(max_relative_difference(warm.final_parameters, ddp.final_parameters), kSameArithmetic);
}

TEST(CloudlessMa, OneClusterEqualsSynchronousTraining) {
  for (bool overlap : {true, false}) {
    auto c = small_config_of("cloudless-ma");
    c.nodes = 1;
    c.options_as<CloudlessMaOptions>().averaging_period = 3;
    c.options_as<CloudlessMaOptions>().overlap = overlap;
    const auto ma = train_real(c);
    c.use_system("ddp");
    const auto sync = train_real(c);
    EXPECT_LE(max_relative_difference(ma.final_parameters, sync.final_parameters), kSameArithmetic) << "overlap " << overlap;
  }
}

TEST(CloudlessAsgd, OneClusterEqualsSynchronousTraining) {
  auto c = small_config_of("cloudless-asgd-ga");
  c.nodes = 1;
  const auto asgd = train_real(c);
  c.use_system("ddp");
  const auto sync = train_real(c);
  EXPECT_LE(max_relative_difference(asgd.final_parameters, sync.final_parameters), kSameArithmetic);
}

TEST(CloudlessAsgd, AccumulatingOneStepWithBoundZeroIsDdp) {
  auto c = small_config_of("cloudless-asgd-ga");
  c.options_as<CloudlessAsgdOptions>().accumulation_steps = 1;
  c.options_as<CloudlessAsgdOptions>().max_staleness = 0;
  const auto asgd = train_real(c);
  c.use_system("ddp");
  const auto ddp = train_real(c);
  // Each step waits for the peer's gradient of the same iteration: with two
  // nodes the sum is the ring's single addition, bitwise.
  EXPECT_LE(max_relative_difference(asgd.final_parameters, ddp.final_parameters), kSameArithmetic);
  EXPECT_EQ(asgd.checksums[0], asgd.checksums[1]);
}

class LocalUpdateSystem : public ::testing::TestWithParam<std::string> {};

// Three nodes on a 40 Mbps, 5 ms in-process link: every system finishes,
// learns, and reports its traffic and staleness.
TEST_P(LocalUpdateSystem, LearnsAndReportsItsRounds) {
  auto c = small_config_of(GetParam());
  c.nodes = 3;
  c.iterations = 40;
  // Each system takes the options it has (the others are not its own).
  set_option(c, "averaging_period", "4");
  set_option(c, "accumulation_steps", "2");
  set_option(c, "max_staleness", "4");
  c.inproc_latency_ms = 5;
  c.inproc_bandwidth_mbps = 40;
  c.out_dir = fresh_dir(GetParam());
  const auto result = train_real(c);
  ASSERT_FALSE(result.evaluations.empty());
  EXPECT_GT(result.evaluations.back().accuracy, 0.3) << "learns something in 40 steps (chance: 0.1)";
  EXPECT_GT(result.bytes_sent, 0u);
  const auto summary = summary_of(c.out_dir);
  ASSERT_TRUE(summary.contains("system_stats")) << summary.dump();
  const auto& stats = summary["system_stats"];
  if (GetParam() == "cloudless-asgd-ga") {
    EXPECT_EQ(stats.at("accumulations_applied").get<int>(), 2 * 20) << "two peers x 20 rounds";
    const auto& o = c.options_as<CloudlessAsgdOptions>();
    EXPECT_LE(stats.at("max_staleness").get<int>(), o.max_staleness + o.accumulation_steps);
  } else {
    EXPECT_GE(stats.at("averaging_rounds").get<int>(), 1);
    EXPECT_LE(stats.at("averaging_rounds").get<int>(), 10);
  }
  std::printf("%s: accuracy %.3f, %s\n", GetParam().c_str(), result.evaluations.back().accuracy, stats.dump().c_str());
}

INSTANTIATE_TEST_SUITE_P(Systems, LocalUpdateSystem, ::testing::Values("local-sgd", "cloudless-ma", "cloudless-asgd-ga"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// A round that takes many iterations (2 Mbps) neither stalls training nor
// is made up later: the periods it covered are skipped, on every node alike
// (the run would hang on mismatched rounds otherwise).
TEST(CloudlessMa, SlowRoundsSkipPeriodsInsteadOfStalling) {
  auto c = small_config_of("cloudless-ma");
  c.iterations = 60;
  c.options_as<CloudlessMaOptions>().averaging_period = 2;
  c.inproc_bandwidth_mbps = 2;
  c.out_dir = fresh_dir("ma-slow");
  const auto result = train_real(c);
  const auto stats = summary_of(c.out_dir).at("system_stats");
  std::printf("slow link: %s\n", stats.dump().c_str());
  EXPECT_GT(stats.at("averaging_periods_skipped").get<int>(), 0);
  EXPECT_GE(stats.at("averaging_rounds").get<int>(), 1);
  EXPECT_LT(stats.at("averaging_rounds").get<int>(), c.iterations / c.options_as<CloudlessMaOptions>().averaging_period);
  EXPECT_GT(stats.at("max_staleness").get<int>(), 1) << "rounds landed iterations after they started";
}

}  // namespace
}  // namespace st::train
