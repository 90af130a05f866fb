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
    ex->compute([] {}, ComputeCost{"forward", -1, 7.5, 0, 0}, [&] {
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
    ex->compute([] {}, ComputeCost{"forward", -1, 10, 0, 0}, [&] { done.push_back(ms(ex->now())); });
  // Another GPU of the same node runs in parallel.
  ex->compute([] {}, ComputeCost{"forward", -1, 10, 0, 1}, [&] { done.push_back(ms(ex->now())); });
  ex->run_until([&] { return done.size() == 4; });
  EXPECT_EQ(done, (std::vector<double>{10, 10, 20, 30}));
}

TEST_F(SimExecutorTest, CpuSlotsBoundParallelism) {
  auto ex = make(2);
  std::vector<double> done;
  for (int i = 0; i < 4; ++i)
    ex->compute([] {}, ComputeCost{"compress", 0, 5, 3, -1}, [&] { done.push_back(ms(ex->now())); });
  ex->run_until([&] { return done.size() == 4; });
  EXPECT_EQ(done, (std::vector<double>{5, 5, 10, 10}));
}

TEST_F(SimExecutorTest, PostsFromInsideWorkWaitUntilTheWorkIsDone) {
  auto ex = make();
  double seen_at = -1, done_at = -1;
  ex->compute([&] { ex->post([&] { seen_at = ms(ex->now()); }); }, ComputeCost{"optimize", 0, 4, 0, -1},
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
      ComputeCost{"backward", -1, 20, 0, 0}, [&] {
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
  EXPECT_EQ(model->cost({"forward", -1, 64, 0, 0}, Nanos(1000)), Nanos(2500));
  EXPECT_EQ(model->cost({"evaluate", -1, 64, 0, -1}, Nanos(1000)), Nanos(0));
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
  EXPECT_EQ(model->cost({"forward", -1, 100, 0, 0}, Nanos(0)), Nanos(static_cast<int64_t>(std::llround(flops * 100 / 1e12 * 1e9))));
  EXPECT_EQ(model->cost({"backward", -1, 100, 0, 0}, Nanos(0)).count(),
            2 * model->cost({"forward", -1, 100, 0, 0}, Nanos(0)).count());
  EXPECT_TRUE(model->deterministic());
  EXPECT_THROW(model->cost({"teleport", -1, 1, 0, 0}, Nanos(0)), std::invalid_argument);
}

class ProfileFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    path_ = ::testing::TempDir() + "/profile_test.yaml";
    std::ofstream(path_) << text;
    return path_;
  }
  std::string error_of(const std::string& text, const std::string& model = "cnn") {
    ComputeModelConfig c;
    c.kind = "profile";
    c.model = model;
    c.profile_path = write(text);
    try {
      make_compute_model(c);
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
  ComputeModelConfig c;
  c.kind = "profile";
  c.profile_path = write(kGoodProfile);
  auto model = make_compute_model(c);
  EXPECT_EQ(model->cost({"forward", -1, 64, 0, 0}, Nanos(1)), std::chrono::milliseconds(16));
  EXPECT_EQ(model->cost({"backward", -1, 16, 0, 0}, Nanos(1)), std::chrono::milliseconds(8));
  EXPECT_EQ(model->cost({"compress", 3, 1000, 0, -1}, Nanos(1)), Nanos(2000));
  EXPECT_EQ(model->cost({"optimize_dense", -1, 10, 0, 0}, Nanos(1)), Nanos(40));
  EXPECT_EQ(model->describe()["device"], "test-gpu");
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
