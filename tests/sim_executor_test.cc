// The simulated executor: virtual time, resource contention, effects of a
// compute task held back until its time has passed, errors and deadlocks.
#include <gtest/gtest.h>
#include <ns3/core-module.h>

#include <fstream>
#include <stdexcept>
#include <vector>

#include "sim/compute_model.h"
#include "sim/sim_executor.h"

namespace st::sim {
namespace {

using runtime::ComputeCost;
using runtime::Nanos;

// Charges `work` milliseconds for every task: deterministic and easy to check.
class WorkIsMilliseconds final : public ComputeTimeModel {
 public:
  Nanos cost(const ComputeCost& task, Nanos) const override { return Nanos(static_cast<int64_t>(task.work * 1e6)); }
  // Mark m of a backward comes after m tenths of its time.
  double progress_share(const ComputeCost&, int mark, double) const override { return mark / 10.0; }
  bool deterministic() const override { return true; }
  nlohmann::json describe() const override { return {{"kind", "test"}}; }
};

// The same, on a machine of `cores` CPU cores.
class WorkIsMillisecondsOnCores final : public ComputeTimeModel {
 public:
  explicit WorkIsMillisecondsOnCores(int cores) : cores_(cores) {}
  Nanos cost(const ComputeCost& task, Nanos) const override { return Nanos(static_cast<int64_t>(task.work * 1e6)); }
  double progress_share(const ComputeCost&, int, double) const override { return 1; }
  bool deterministic() const override { return true; }
  nlohmann::json describe() const override { return {{"kind", "test"}}; }
  int cpu_cores(int) const override { return cores_; }

 private:
  int cores_;
};

class SimExecutorTest : public ::testing::Test {
 protected:
  void TearDown() override { ns3::Simulator::Destroy(); }
  std::unique_ptr<SimExecutor> make(int cpu_cores = 2) {
    return make_sim_executor(std::make_unique<WorkIsMilliseconds>(), SimExecutorOptions{cpu_cores});
  }
  static double ms(Nanos t) { return std::chrono::duration<double, std::milli>(t).count(); }
};

TEST_F(SimExecutorTest, ComputeChargesItsModelledCost) {
  auto ex = make();
  double done_at = -1;
  bool finished = false;
  ex->post([&] {
    ex->compute([] {}, ComputeCost{runtime::TaskKind::kForward, -1, 7.5, 0, 0}, [&] {
      done_at = ms(ex->now());
      finished = true;
    });
  });
  ex->run_until([&] { return finished; });
  EXPECT_DOUBLE_EQ(done_at, 7.5);
}

TEST_F(SimExecutorTest, OneGpuRunsItsTasksOneAfterAnother) {
  auto ex = make();
  std::vector<double> done;
  for (int i = 0; i < 3; ++i)
    ex->compute([] {}, ComputeCost{runtime::TaskKind::kForward, -1, 10, 0, 0}, [&] { done.push_back(ms(ex->now())); });
  // Another GPU of the same node runs in parallel.
  ex->compute([] {}, ComputeCost{runtime::TaskKind::kForward, -1, 10, 0, 1}, [&] { done.push_back(ms(ex->now())); });
  ex->run_until([&] { return done.size() == 4; });
  EXPECT_EQ(done, (std::vector<double>{10, 10, 20, 30}));
}

TEST_F(SimExecutorTest, CpuSlotsBoundParallelism) {
  auto ex = make(2);
  std::vector<double> done;
  for (int i = 0; i < 4; ++i)
    ex->compute([] {}, ComputeCost{runtime::TaskKind::kCompress, 0, 5, 3, -1}, [&] { done.push_back(ms(ex->now())); });
  ex->run_until([&] { return done.size() == 4; });
  EXPECT_EQ(done, (std::vector<double>{5, 5, 10, 10}));
}

// Completion times of six 5 ms CPU tasks on one node.
std::vector<double> six_cpu_tasks(SimExecutor& ex) {
  std::vector<double> done;
  for (int i = 0; i < 6; ++i)
    ex.compute([] {}, ComputeCost{runtime::TaskKind::kGather, 0, 5, 0, -1},
               [&] { done.push_back(std::chrono::duration<double, std::milli>(ex.now()).count()); });
  ex.run_until([&] { return done.size() == 6; });
  return done;
}

TEST_F(SimExecutorTest, CpuSlotsAreTheModelledMachinesCoresUnlessTheScenarioSays) {
  {
    auto ex = make_sim_executor(std::make_unique<WorkIsMillisecondsOnCores>(3), SimExecutorOptions{});
    EXPECT_EQ(ex->cpu_cores(0), 3);
    EXPECT_EQ(ex->cpu_cores_source(0), "profile");
    EXPECT_EQ(six_cpu_tasks(*ex), (std::vector<double>{5, 5, 5, 10, 10, 10}));
  }
  ns3::Simulator::Destroy();
  {
    auto ex = make_sim_executor(std::make_unique<WorkIsMillisecondsOnCores>(3), SimExecutorOptions{1});
    EXPECT_EQ(ex->cpu_cores_source(0), "scenario");
    EXPECT_EQ(six_cpu_tasks(*ex), (std::vector<double>{5, 10, 15, 20, 25, 30}));
  }
  ns3::Simulator::Destroy();
  {  // a model that does not say: the documented default
    auto ex = make_sim_executor(std::make_unique<WorkIsMilliseconds>(), SimExecutorOptions{});
    EXPECT_EQ(ex->cpu_cores(0), kDefaultCpuCores);
    EXPECT_EQ(ex->cpu_cores_source(0), "default");
  }
}

TEST_F(SimExecutorTest, PostsFromInsideWorkWaitUntilTheWorkIsDone) {
  auto ex = make();
  double seen_at = -1, done_at = -1;
  ex->compute([&] { ex->post([&] { seen_at = ms(ex->now()); }); }, ComputeCost{runtime::TaskKind::kOptimize, 0, 4, 0, -1},
              [&] { done_at = ms(ex->now()); });
  ex->run_until([&] { return seen_at >= 0 && done_at >= 0; });
  EXPECT_DOUBLE_EQ(seen_at, 4);
  EXPECT_DOUBLE_EQ(done_at, 4);
}

// A backward's per-layer gradients leave it at their own virtual times, in
// the model's order, all before the task's end; outside compute work a
// progress post is a plain post.
TEST_F(SimExecutorTest, ProgressMarksRunAtTheirShareOfTheChargedTime) {
  auto ex = make();
  std::vector<std::pair<int, double>> seen;
  double done_at = -1;
  ex->compute(
      [&] {
        for (int mark : {7, 2, 10}) ex->post_progress(mark, [&, mark] { seen.push_back({mark, ms(ex->now())}); });
      },
      ComputeCost{runtime::TaskKind::kBackward, -1, 20, 0, 0}, [&] {
        done_at = ms(ex->now());
        seen.push_back({-1, done_at});
      });
  ex->run_until([&] { return done_at >= 0; });
  EXPECT_EQ(seen, (std::vector<std::pair<int, double>>{{2, 4}, {7, 14}, {10, 20}, {-1, 20}}));
  bool plain = false;
  ex->post_progress(3, [&] { plain = true; });
  ex->run_until([&] { return plain; });
  EXPECT_DOUBLE_EQ(ms(ex->now()), 20);
}

TEST_F(SimExecutorTest, PostAfterWaitsVirtualTime) {
  auto ex = make();
  double at = -1;
  ex->post_after(std::chrono::milliseconds(250), [&] { at = ms(ex->now()); });
  ex->run_until([&] { return at >= 0; });
  EXPECT_DOUBLE_EQ(at, 250);
}

TEST_F(SimExecutorTest, TaskExceptionReachesRunUntil) {
  auto ex = make();
  ex->post([] { throw std::runtime_error("boom in a task"); });
  EXPECT_THROW(
      {
        try {
          ex->run_until([] { return false; });
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "boom in a task");
          throw;
        }
      },
      std::runtime_error);
}

TEST_F(SimExecutorTest, RunningOutOfEventsIsADeadlockError) {
  auto ex = make();
  ex->post_after(std::chrono::seconds(2), [] {});
  // The watchdog is the last event: nothing else is left, so the run ends
  // at its first check after the last task.
  try {
    ex->run_until([] { return false; });
    FAIL() << "expected a deadlock error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("deadlocked"), std::string::npos) << e.what();
  }
}

TEST_F(SimExecutorTest, EndlessBackgroundEventsCannotHideADeadlock) {
  auto ex = make_sim_executor(std::make_unique<WorkIsMilliseconds>(), SimExecutorOptions{2, 5.0});
  // Like trace replay: an event every simulated second, forever.
  std::function<void()> tick = [&] { ns3::Simulator::Schedule(ns3::Seconds(1), tick); };
  tick();
  ex->post_after(std::chrono::seconds(2), [] {});
  try {
    ex->run_until([] { return false; });
    FAIL() << "expected a stall error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no engine task ran for 5 s of virtual time (at 10.000 s)"),
              std::string::npos)
        << e.what();
  }
}

TEST(ComputeModels, MeasuredScalesTheWallTime) {
  auto model = make_compute_model({"measured", 2.5});
  EXPECT_EQ(model->cost({runtime::TaskKind::kForward, -1, 64, 0, 0}, Nanos(1000)), Nanos(2500));
  EXPECT_EQ(model->cost({runtime::TaskKind::kEvaluate, -1, 64, 0, -1}, Nanos(1000)), Nanos(0));
  EXPECT_FALSE(model->deterministic());
  EXPECT_THROW(make_compute_model({"measured", 0}), std::invalid_argument);
  EXPECT_THROW(make_compute_model({"guessed"}), std::invalid_argument);
}

TEST(ComputeModels, AnalyticIsFlopsOverRate) {
  ComputeModelConfig c;
  c.kind = "analytic";
  c.model = "mlp";
  c.device_tflops = 1.0;
  auto model = make_compute_model(c);
  const double flops = 2.0 * (784 * 256 + 256 * 10);
  EXPECT_EQ(model->cost({runtime::TaskKind::kForward, -1, 100, 0, 0}, Nanos(0)), Nanos(static_cast<int64_t>(std::llround(flops * 100 / 1e12 * 1e9))));
  EXPECT_EQ(model->cost({runtime::TaskKind::kBackward, -1, 100, 0, 0}, Nanos(0)).count(),
            2 * model->cost({runtime::TaskKind::kForward, -1, 100, 0, 0}, Nanos(0)).count());
  EXPECT_TRUE(model->deterministic());
  // Every kind of task the engine runs has a price and a name (the kinds
  // are an enum, so an unknown one cannot reach a model).
  for (int k = 0; k < runtime::kTaskKinds; ++k) {
    const auto kind = static_cast<runtime::TaskKind>(k);
    EXPECT_NO_THROW(model->cost({kind, -1, 1, 0, 0}, Nanos(0))) << runtime::to_string(kind);
    EXPECT_STRNE(runtime::to_string(kind), "unknown");
  }
}

class ProfileFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    // One file per test: ctest runs the tests of this suite in parallel.
    path_ = ::testing::TempDir() + "/profile_test_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() +
            ".yaml";
    std::ofstream(path_) << text;
    return path_;
  }
  // The profile model of `text` for `model`.
  std::unique_ptr<ComputeTimeModel> model_of(const std::string& text, const std::string& model = "cnn",
                                             const std::string& compressor = "") {
    ComputeModelConfig c;
    c.kind = "profile";
    c.model = model;
    c.compressor = compressor;
    c.profile_path = write(text);
    return make_compute_model(c);
  }
  std::string error_of(const std::string& text, const std::string& model = "cnn") {
    try {
      model_of(text, model);
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  std::string path_;
};

constexpr const char* kGoodProfile = R"(device: test-gpu
cpu: {gather_ns_per_element: 1, compress_ns_per_element: 2, optimize_ns_per_index: 3}
accelerator: {optimize_dense_ns_per_element: 4, compress_gpu_ns_per_element: 5}
models:
  cnn: {batch: 32, forward_ms: 8, backward_ms: 16}
)";

TEST_F(ProfileFile, ScalesWithBatchAndCountsKernels) {
  auto model = model_of(kGoodProfile);
  EXPECT_EQ(model->cost({runtime::TaskKind::kForward, -1, 64, 0, 0}, Nanos(1)), std::chrono::milliseconds(16));
  EXPECT_EQ(model->cost({runtime::TaskKind::kBackward, -1, 16, 0, 0}, Nanos(1)), std::chrono::milliseconds(8));
  EXPECT_EQ(model->cost({runtime::TaskKind::kCompress, 3, 1000, 0, -1}, Nanos(1)), Nanos(2000));
  EXPECT_EQ(model->cost({runtime::TaskKind::kOptimizeDense, -1, 10, 0, 0}, Nanos(1)), Nanos(40));
  EXPECT_EQ(model->describe()["device"], "test-gpu");
}

Nanos cost_of(const ComputeTimeModel& model, runtime::TaskKind kind, double work, double density = 0) {
  ComputeCost task{kind, -1, work, 0, -1};
  task.density = density;
  return model.cost(task, Nanos(1));
}

// Profiles from before copy, view and the density curve were measured:
// copy and view from the gather's rate by bytes moved (said in the
// manifest), compression flat, no opinion on the cores.
TEST_F(ProfileFile, OlderProfilesPriceLoadsFromTheGatherRate) {
  auto model = model_of(kGoodProfile);
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCopy, 1200), Nanos(800));   // 1 ns x 8/12
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kView, 1200), Nanos(1600));  // 1 ns x 16/12
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kLoad, 1200), Nanos(800));   // a host copy
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.4), Nanos(2000));
  EXPECT_TRUE(model->describe()["cpu_derived"].contains("view_ns_per_element"));
  EXPECT_EQ(model->cpu_cores(0), 0);
}

constexpr const char* kMeasuredLoadsProfile = R"(device: test-gpu
cpu_cores: 6
cpu:
  gather_ns_per_element: 1
  copy_ns_per_element: 0.5
  view_ns_per_element: 2
  compress_ns_per_element_at_density: {0.01: 1, 0.05: 2, 0.5: 11}
  optimize_ns_per_index: 3
accelerator: {optimize_dense_ns_per_element: 4, compress_gpu_ns_per_element: 5}
transfer: {d2h_gbps: 8, h2d_gbps: 2}
models:
  cnn: {batch: 32, forward_ms: 8, backward_ms: 16}
)";

TEST_F(ProfileFile, PricesLoadsViewsTransfersAndCompressionAtItsDensity) {
  auto model = model_of(kMeasuredLoadsProfile);
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCopy, 1000), Nanos(500));
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kView, 1000), Nanos(2000));
  // A host copy, then 4 bytes per element at 2 GB/s.
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kLoad, 1000), Nanos(2500));
  // The gather brings each gradient to the host first (4 bytes at 8 GB/s).
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kGather, 1000), Nanos(1500));
  // Measured points, linear between them, flat beyond.
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.05), Nanos(2000));
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.275), Nanos(6500));
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.001), Nanos(1000));
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.9), Nanos(11000));
  EXPECT_EQ(model->cpu_cores(0), 6);
  EXPECT_EQ(model->describe()["cpu_cores"], 6);
}

// A run's compressor is priced by its own curve where the profile measured
// one, else by thresholdv16's, and the manifest says which.
TEST_F(ProfileFile, PricesTheRunsCompressorByItsOwnCurve) {
  std::string text = kMeasuredLoadsProfile;
  text.replace(text.find("  optimize_ns_per_index"), 0,
               "  compress_ns_per_element_at_density_by_compressor:\n"
               "    topk: {0.01: 3, 0.5: 30}\n"
               "    randomk: {0.05: 0.5}\n");
  const auto topk = model_of(text, "cnn", "topk");
  EXPECT_EQ(cost_of(*topk, runtime::TaskKind::kCompress, 1000, 0.01), Nanos(3000));
  EXPECT_EQ(cost_of(*topk, runtime::TaskKind::kCompress, 1000, 0.255), Nanos(16500));
  EXPECT_EQ(topk->describe()["compress_curve"], "topk");
  EXPECT_EQ(topk->describe()["cpu"]["compress_ns_per_element_at_density"]["0.5"], 30.0);
  // Only compress tasks change.
  EXPECT_EQ(cost_of(*topk, runtime::TaskKind::kGather, 1000), Nanos(1500));
  const auto randomk = model_of(text, "cnn", "randomk");
  EXPECT_EQ(cost_of(*randomk, runtime::TaskKind::kCompress, 1000, 0.5), Nanos(500));
  const auto blocks = model_of(text, "cnn", "thresholdv16");
  EXPECT_EQ(cost_of(*blocks, runtime::TaskKind::kCompress, 1000, 0.05), Nanos(2000));
  EXPECT_EQ(blocks->describe()["compress_curve"], "thresholdv16");
  // No curve of thresholdv's: thresholdv16's, said in the manifest.
  const auto unmeasured = model_of(text, "cnn", "thresholdv");
  EXPECT_EQ(cost_of(*unmeasured, runtime::TaskKind::kCompress, 1000, 0.05), Nanos(2000));
  EXPECT_EQ(unmeasured->describe()["compress_curve"], "thresholdv16 (the profile has no curve of thresholdv's)");
  // A system that compresses nothing on the CPU: no word of it.
  EXPECT_FALSE(model_of(text)->describe().contains("compress_curve"));
  const auto old_profile = model_of(kMeasuredLoadsProfile, "cnn", "topk");
  EXPECT_EQ(cost_of(*old_profile, runtime::TaskKind::kCompress, 1000, 0.05), Nanos(2000));
  EXPECT_EQ(old_profile->describe()["compress_curve"], "thresholdv16 (the profile has no curve of topk's)");
}

TEST_F(ProfileFile, ABadCompressorCurveIsNamed) {
  std::string unknown = kMeasuredLoadsProfile;
  unknown.replace(unknown.find("  optimize_ns_per_index"), 0,
                  "  compress_ns_per_element_at_density_by_compressor: {thresholdv16: {0.05: 1}}\n");
  EXPECT_NE(error_of(unknown).find("'thresholdv16' is not a compressor with a curve of its own"), std::string::npos)
      << error_of(unknown);
  std::string bad_density = kMeasuredLoadsProfile;
  bad_density.replace(bad_density.find("  optimize_ns_per_index"), 0,
                      "  compress_ns_per_element_at_density_by_compressor: {topk: {2: 1}}\n");
  const std::string error = error_of(bad_density);
  EXPECT_NE(error.find("compress_ns_per_element_at_density_by_compressor.topk"), std::string::npos) << error;
  EXPECT_NE(error.find("density 2 is outside (0, 1]"), std::string::npos) << error;
}

TEST_F(ProfileFile, ABadLoadsOrDensityEntryIsNamed) {
  std::string both = kMeasuredLoadsProfile;
  both.replace(both.find("  optimize_ns_per_index"), 0, "  compress_ns_per_element: 2\n");
  EXPECT_NE(error_of(both).find("give exactly one of compress_ns_per_element_at_density"), std::string::npos)
      << error_of(both);
  std::string bad_density = kMeasuredLoadsProfile;
  bad_density.replace(bad_density.find("0.5: 11"), 7, "1.5: 11");
  EXPECT_NE(error_of(bad_density).find("cpu.compress_ns_per_element_at_density"), std::string::npos)
      << error_of(bad_density);
  EXPECT_NE(error_of(bad_density).find("density 1.5 is outside (0, 1]"), std::string::npos) << error_of(bad_density);
  std::string not_a_number = kMeasuredLoadsProfile;
  not_a_number.replace(not_a_number.find("0.5: 11"), 7, "half: 11");
  EXPECT_NE(error_of(not_a_number).find("'half' is not a density"), std::string::npos) << error_of(not_a_number);
  std::string twice = kMeasuredLoadsProfile;
  twice.replace(twice.find("0.5: 11"), 7, "5e-1: 11, 0.5: 12");
  EXPECT_NE(error_of(twice).find("density 0.5 is given twice"), std::string::npos) << error_of(twice);
  std::string zero_cores = kMeasuredLoadsProfile;
  zero_cores.replace(zero_cores.find("cpu_cores: 6"), 12, "cpu_cores: 0");
  EXPECT_NE(error_of(zero_cores).find("cpu_cores"), std::string::npos) << error_of(zero_cores);
}

// Unequal clusters: each node gets the CPU slots of its own profile's
// machine, and says where they came from; the measured model's count is
// this machine's, and says so.
TEST_F(ProfileFile, EachNodeHasItsOwnProfilesCoresAndSaysWhere) {
  std::string two_cores = kMeasuredLoadsProfile;
  two_cores.replace(two_cores.find("cpu_cores: 6"), 12, "cpu_cores: 2");
  const std::string six = write(kMeasuredLoadsProfile);
  const std::string two = ::testing::TempDir() + "/profile_test_two_cores.yaml";
  std::ofstream(two) << two_cores;
  ComputeModelConfig c;
  c.kind = "profile";
  c.model = "cnn";
  c.profile_path = six;
  c.node_profiles = {six, two};
  auto ex = make_sim_executor(make_compute_model(c), SimExecutorOptions{});
  EXPECT_EQ(ex->cpu_cores(0), 6);
  EXPECT_EQ(ex->cpu_cores(1), 2);
  EXPECT_EQ(ex->cpu_cores_source(1), "profile");
  ex.reset();
  ns3::Simulator::Destroy();
  auto measured = make_sim_executor(make_compute_model({"measured", 1.0}), SimExecutorOptions{});
  EXPECT_GE(measured->cpu_cores(0), 1);
  EXPECT_EQ(measured->cpu_cores_source(0), "this machine");
  measured.reset();
  ns3::Simulator::Destroy();
}

TEST(ComputeModels, AnalyticPricesLoadsAndCompressionByBytesMoved) {
  ComputeModelConfig c;
  c.kind = "analytic";
  c.cpu_gbps = 4;
  c.h2d_gbps = 2;
  auto model = make_compute_model(c);
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCopy, 1000), Nanos(2000));   // 8 bytes at 4 GB/s
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kView, 1000), Nanos(4000));   // 16 bytes
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kLoad, 1000), Nanos(4000));   // 8 bytes, then 4 at 2 GB/s
  // One pass (4 bytes) plus 8 bytes per kept element.
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.05), Nanos(1100));
  EXPECT_EQ(cost_of(*model, runtime::TaskKind::kCompress, 1000, 0.5), Nanos(2000));
  c.h2d_gbps = 0;
  EXPECT_THROW(make_compute_model(c), std::invalid_argument);
}

TEST_F(ProfileFile, ErrorsNameTheFileAndKey) {
  EXPECT_NE(error_of(kGoodProfile, "vit").find("no entry for model 'vit'"), std::string::npos);
  std::string missing_cpu = kGoodProfile;
  missing_cpu.replace(missing_cpu.find("cpu:"), 4, "cpx:");
  EXPECT_NE(error_of(missing_cpu).find("cpx (line 2): unknown key"), std::string::npos) << error_of(missing_cpu);
  std::string bad_number = kGoodProfile;
  bad_number.replace(bad_number.find("forward_ms: 8"), 13, "forward_ms: x");
  EXPECT_NE(error_of(bad_number).find("models.cnn.forward_ms (line 5): 'x' is not a number"), std::string::npos)
      << error_of(bad_number);
  EXPECT_NE(error_of("models: [1, 2").find("line"), std::string::npos);
  ComputeModelConfig c;
  c.kind = "profile";
  c.profile_path = "/nonexistent/profile.yaml";
  EXPECT_THROW(make_compute_model(c), std::runtime_error);
  try {
    make_compute_model(c);
  } catch (const std::exception& e) {  // says how to make one
    EXPECT_NE(std::string(e.what()).find("stellatrain bench profile --models cnn"), std::string::npos) << e.what();
  }
  EXPECT_EQ(error_of(kGoodProfile), "");
}

}  // namespace
}  // namespace st::sim
