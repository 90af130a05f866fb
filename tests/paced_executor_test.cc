// The paced executor: a real-time run takes the time its compute-time model
// prices, its resources queue as the simulated executor's do, a task's
// posts and progress marks wait for their priced times, and work that
// outruns its price is counted. Lower bounds are the claim (pacing never
// lets a task end early); upper bounds are loose, since the host's
// scheduler adds its own delay to every timer.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/runtime/paced_executor.h"

namespace st::runtime {
namespace {

// Charges `work` milliseconds for every task; mark m of a task comes after
// m tenths of its time.
class WorkIsMilliseconds final : public ComputeTimeModel {
 public:
  explicit WorkIsMilliseconds(int cores = 0, bool deterministic = true) : cores_(cores), deterministic_(deterministic) {}
  Nanos cost(const ComputeCost& task, Nanos) const override { return Nanos(static_cast<int64_t>(task.work * 1e6)); }
  double progress_share(const ComputeCost&, int mark, double) const override { return mark / 10.0; }
  bool deterministic() const override { return deterministic_; }
  nlohmann::json describe() const override { return {{"kind", "test"}}; }
  int cpu_cores(int) const override { return cores_; }

 private:
  int cores_;
  bool deterministic_;
};

// A scheduler's delay on a shared host: generous, it is not the claim.
constexpr double kSlackMs = 150;

double ms(Nanos t) { return std::chrono::duration<double, std::milli>(t).count(); }

ComputeCost gpu_task(double work_ms, int device = 0) { return ComputeCost{TaskKind::kForward, -1, work_ms, 0, device}; }
ComputeCost cpu_task(double work_ms) { return ComputeCost{TaskKind::kGather, -1, work_ms, 0, -1}; }

class PacedExecutorTest : public ::testing::Test {
 protected:
  std::unique_ptr<PacedExecutor> make(int cpu_cores = 0, int model_cores = 0) {
    return make_paced_executor(make_thread_pool_executor(4), std::make_shared<WorkIsMilliseconds>(model_cores),
                               cpu_cores);
  }

  // Runs `tasks` compute tasks posted at once and returns when each one's
  // `done` ran, in ms since the post.
  std::vector<double> done_times(PacedExecutor& ex, const std::vector<ComputeCost>& tasks) {
    std::vector<double> at(tasks.size(), -1);
    std::atomic<int> left{static_cast<int>(tasks.size())};
    std::mutex mutex;
    const Nanos posted = ex.now();
    ex.post([&] {
      for (std::size_t i = 0; i < tasks.size(); ++i)
        ex.compute([] {}, tasks[i], [&, i] {
          std::lock_guard<std::mutex> lock(mutex);
          at[i] = ms(ex.now() - posted);
          --left;
        });
    });
    ex.run_until([&] { return left == 0; });
    return at;
  }
};

TEST_F(PacedExecutorTest, DoneRunsAtThePricedTimeNotTheWorks) {
  auto ex = make();
  const auto at = done_times(*ex, {gpu_task(80)});
  EXPECT_GE(at[0], 80);
  EXPECT_LT(at[0], 80 + kSlackMs);
  EXPECT_EQ(ex->stats().tasks, 1u);
  EXPECT_NEAR(ex->stats().priced_s, 0.080, 1e-9);
  EXPECT_EQ(ex->stats().late_tasks, 0u);
}

// The tasks last kSlackMs each, so "did not wait for a task" (done before
// two tasks' time) leaves the same scheduling slack as the other bounds.
TEST_F(PacedExecutorTest, ANodesGpuRunsOneTaskAtATimeAndOtherGpusDoNotWait) {
  auto ex = make();
  const double task = kSlackMs;
  const auto at = done_times(*ex, {gpu_task(task, 0), gpu_task(task, 0), gpu_task(task, 1)});
  EXPECT_GE(at[0], task);
  EXPECT_GE(at[1], 2 * task);  // waited for the first on GPU 0
  EXPECT_GE(at[2], task);
  EXPECT_LT(at[2], 2 * task);  // GPU 1 was free
  EXPECT_LT(at[1], 2 * task + kSlackMs);
}

TEST_F(PacedExecutorTest, ANodesCpuHasItsSlots) {
  auto ex = make(/*cpu_cores=*/2);
  EXPECT_EQ(ex->cpu_cores(0), 2);
  const double task = kSlackMs;
  const auto at = done_times(*ex, {cpu_task(task), cpu_task(task), cpu_task(task)});
  EXPECT_GE(at[0], task);
  EXPECT_GE(at[1], task);
  EXPECT_LT(std::max(at[0], at[1]), 2 * task);  // two slots at once
  EXPECT_GE(at[2], 2 * task);                    // the third waited for one
}

TEST_F(PacedExecutorTest, CpuSlotsComeFromTheScenarioElseTheModelElseTheDefault) {
  EXPECT_EQ(make(3, 16)->cpu_cores(0), 3);
  EXPECT_EQ(make(0, 16)->cpu_cores(0), 16);
  EXPECT_EQ(make(0, 0)->cpu_cores(0), kDefaultCpuSlots);
}

TEST_F(PacedExecutorTest, WhatTheWorkPostsWaitsForThePricedEnd) {
  auto ex = make();
  double posted_ran = -1, later_ran = -1;
  std::atomic<bool> finished{false};
  const Nanos start = ex->now();
  ex->post([&] {
    ex->compute(
        [&] {
          ex->post([&] { posted_ran = ms(ex->now() - start); });
          ex->post_after(std::chrono::milliseconds(30), [&] {
            later_ran = ms(ex->now() - start);
            finished = true;
          });
        },
        gpu_task(70), [] {});
  });
  ex->run_until([&] { return finished.load(); });
  EXPECT_GE(posted_ran, 70);
  EXPECT_GE(later_ran, 100);  // its delay counts from the release
}

TEST_F(PacedExecutorTest, ProgressMarksRunAtTheirPricedShare) {
  auto ex = make();
  std::vector<double> mark_at(2, -1);
  double done_at = -1;
  std::atomic<bool> finished{false};
  const Nanos start = ex->now();
  ex->post([&] {
    ex->compute(
        [&] {
          ex->post_progress(2, [&] { mark_at[0] = ms(ex->now() - start); });
          ex->post_progress(8, [&] { mark_at[1] = ms(ex->now() - start); });
        },
        ComputeCost{TaskKind::kBackward, -1, 200, 0, 0}, [&] {
          done_at = ms(ex->now() - start);
          finished = true;
        });
  });
  ex->run_until([&] { return finished.load(); });
  EXPECT_GE(mark_at[0], 40);
  EXPECT_LT(mark_at[0], 160);  // well before the 80% mark
  EXPECT_GE(mark_at[1], 160);
  EXPECT_GE(done_at, 200);
}

TEST_F(PacedExecutorTest, WorkLongerThanItsPriceIsCountedLateAndStillCompletes) {
  auto ex = make();
  std::atomic<bool> finished{false};
  const Nanos start = ex->now();
  double done_at = -1;
  ex->post([&] {
    ex->compute([] { std::this_thread::sleep_for(std::chrono::milliseconds(60)); }, gpu_task(10), [&] {
      done_at = ms(ex->now() - start);
      finished = true;
    });
  });
  ex->run_until([&] { return finished.load(); });
  EXPECT_GE(done_at, 60);
  const auto stats = ex->stats();
  EXPECT_EQ(stats.late_tasks, 1u);
  EXPECT_GE(stats.worst_late_ms, 49);
  EXPECT_GE(stats.work_s, 0.060);
  // Counted under its task kind too, and under no other.
  EXPECT_EQ(stats.by_kind[static_cast<int>(TaskKind::kForward)].late_tasks, 1u);
  EXPECT_EQ(stats.by_kind[static_cast<int>(TaskKind::kGather)].tasks, 0u);
}

TEST_F(PacedExecutorTest, AnErrorInTheWorkReachesRunUntil) {
  auto ex = make();
  ex->post([&] { ex->compute([] { throw std::runtime_error("layer 3 broke"); }, gpu_task(5), [] {}); });
  try {
    ex->run_until([] { return false; });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "layer 3 broke");
  }
}

TEST_F(PacedExecutorTest, RefusesAModelThatPricesThisMachine) {
  try {
    make_paced_executor(make_thread_pool_executor(1), std::make_shared<WorkIsMilliseconds>(0, false));
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("must price the modelled hardware"), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_paced_executor(make_thread_pool_executor(1), nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace st::runtime
