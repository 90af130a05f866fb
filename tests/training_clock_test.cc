// A wall-clock run's clock counts from the start of training
// (core/train/run/training_clock.h): restart() moves now()'s origin, and
// nothing else (delays, compute, workers) changes.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/train/run/training_clock.h"

namespace st::train {
namespace {

double ms(runtime::Nanos t) { return std::chrono::duration<double, std::milli>(t).count(); }

TEST(TrainingClock, CountsFromTheStartOfTraining) {
  auto pool = runtime::make_thread_pool_executor(2);
  TrainingClock clock(*pool);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));  // "setup"
  EXPECT_GE(ms(clock.now()), 80);
  clock.restart();
  EXPECT_LT(ms(clock.now()), 40);
  EXPECT_GE(ms(pool->now()), 80);  // the inner clock is untouched
  std::atomic<bool> ran{false};
  double ran_at = -1;
  clock.post_after(std::chrono::milliseconds(30), [&] {
    ran_at = ms(clock.now());
    ran = true;
  });
  clock.run_until([&] { return ran.load(); });
  EXPECT_GE(ran_at, 30);
  EXPECT_EQ(clock.workers(), 2);
}

}  // namespace
}  // namespace st::train
