// OrderedStage: jobs run strictly in number order, one at a time, whatever
// the order of submission and whether `next` comes before the job returns or
// later; and a long queue of jobs that finish at once does not deepen the
// stack (it ran by recursion once).
#include "core/train/node/ordered_stage.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace st::train {
namespace {

TEST(OrderedStage, RunsJobsInNumberOrderWhateverTheSubmissionOrder) {
  OrderedStage stage;
  std::vector<int> ran;
  for (int k : {3, 1, 4, 0, 2}) stage.submit(static_cast<uint64_t>(k), [&ran, k](std::function<void()> next) {
    ran.push_back(k);
    next();
  });
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(OrderedStage, WaitsForALaterNext) {
  OrderedStage stage;
  std::vector<int> ran;
  std::function<void()> finish_first;
  stage.submit(0, [&](std::function<void()> next) {
    ran.push_back(0);
    finish_first = next;  // done later, as from another task
  });
  stage.submit(1, [&](std::function<void()> next) {
    ran.push_back(1);
    next();
  });
  EXPECT_EQ(ran, (std::vector<int>{0})) << "job 1 must wait for job 0's next";
  finish_first();
  EXPECT_EQ(ran, (std::vector<int>{0, 1}));
}

// Half a million queued jobs that each call `next` at once: with recursion
// this needs a stack frame chain per job (tens of MB) and overflows.
TEST(OrderedStage, AQueueOfImmediateJobsDoesNotGrowTheStack) {
  constexpr uint64_t kJobs = 500'000;
  OrderedStage stage;
  uint64_t ran = 0, out_of_order = 0;
  auto job = [&](uint64_t k) {
    return [&, k](std::function<void()> next) {
      if (k != ran) ++out_of_order;
      ++ran;
      next();
    };
  };
  for (uint64_t k = kJobs - 1; k >= 1; --k) stage.submit(k, job(k));
  stage.submit(0, job(0));  // releases all of them
  EXPECT_EQ(ran, kJobs);
  EXPECT_EQ(out_of_order, 0u);
}

TEST(OrderedStage, ConcurrentSubmittersStillRunOneAtATimeInOrder) {
  OrderedStage stage;
  constexpr int kPerThread = 2000, kThreads = 4;
  std::atomic<int> running{0}, overlaps{0};
  std::vector<int> ran;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int k = i * kThreads + t;
        stage.submit(static_cast<uint64_t>(k), [&, k](std::function<void()> next) {
          if (running.fetch_add(1) != 0) ++overlaps;
          ran.push_back(k);
          running.fetch_sub(1);
          next();
        });
      }
    });
  for (auto& thread : threads) thread.join();
  ASSERT_EQ(ran.size(), static_cast<std::size_t>(kPerThread * kThreads));
  for (std::size_t i = 0; i < ran.size(); ++i) ASSERT_EQ(ran[i], static_cast<int>(i));
  EXPECT_EQ(overlaps.load(), 0);
}

}  // namespace
}  // namespace st::train
