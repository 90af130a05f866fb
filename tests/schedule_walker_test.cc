// The trace walker both backends replay with (net/schedule_walker.h), on a
// hand-driven clock: it applies the step in force at the start, then each
// step at its boundary with one pending call at a time; a clock that runs
// late skips the steps already over; stop() cancels what is pending.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "net/schedule_walker.h"
#include "traces/generators.h"

namespace st::net {
namespace {

// A clock the test moves by hand; calls run when it gets there.
class ManualClock final : public ReplayClock {
 public:
  double now_s() const override { return now_; }
  uint64_t call_at(double at_s, std::function<void()> fn) override {
    calls_[{at_s, next_}] = std::move(fn);
    return next_++;
  }
  void cancel(uint64_t handle) override {
    for (auto it = calls_.begin(); it != calls_.end(); ++it)
      if (it->first.second == handle) {
        calls_.erase(it);
        return;
      }
  }
  // Moves to `t`, running every call due by then in time order.
  void advance_to(double t) {
    while (!calls_.empty() && calls_.begin()->first.first <= t) {
      auto call = std::move(calls_.begin()->second);
      now_ = std::max(now_, calls_.begin()->first.first);
      calls_.erase(calls_.begin());
      call();
    }
    now_ = t;
  }
  // Jumps to `t` before running what was due (a late clock).
  void jump_to(double t) {
    now_ = t;
    advance_to(t);
  }
  std::size_t pending() const { return calls_.size(); }

 private:
  double now_ = 0;
  uint64_t next_ = 0;
  std::map<std::pair<double, uint64_t>, std::function<void()>> calls_;
};

struct Applied {
  double mbps, due_s;
  bool first;
};

RateSchedule three_steps() {
  return RateSchedule(traces::step_trace({{0, 100}, {2, 50}, {5, 0}}, 8), 0);  // loops every 8 s
}

TEST(ScheduleWalker, AppliesEachStepAtItsBoundaryWithOnePendingCall) {
  ManualClock clock;
  std::vector<Applied> applied;
  ScheduleWalker walker(three_steps(), clock, [&](const traces::TraceStep& step, double due_s, bool first) {
    applied.push_back({step.mbps, due_s, first});
  });
  walker.start();
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_TRUE(applied[0].first);
  EXPECT_EQ(applied[0].mbps, 100);
  EXPECT_EQ(clock.pending(), 1u);
  clock.advance_to(9);  // through 2, 5, the loop at 8
  ASSERT_EQ(applied.size(), 4u);
  EXPECT_EQ(applied[1].mbps, 50);
  EXPECT_DOUBLE_EQ(applied[1].due_s, 2);
  EXPECT_EQ(applied[2].mbps, 0);
  EXPECT_DOUBLE_EQ(applied[2].due_s, 5);
  EXPECT_EQ(applied[3].mbps, 100);
  EXPECT_DOUBLE_EQ(applied[3].due_s, 8);
  EXPECT_FALSE(applied[3].first);
  EXPECT_EQ(clock.pending(), 1u);
}

TEST(ScheduleWalker, ALateClockSkipsStepsAlreadyOver) {
  ManualClock clock;
  std::vector<Applied> applied;
  ScheduleWalker walker(three_steps(), clock, [&](const traces::TraceStep& step, double due_s, bool first) {
    applied.push_back({step.mbps, due_s, first});
  });
  walker.start();
  clock.jump_to(6);  // 2 s and 5 s both passed before the clock ran its calls
  ASSERT_EQ(applied.size(), 2u);
  EXPECT_EQ(applied[1].mbps, 0) << "the step in force at 6 s";
  EXPECT_DOUBLE_EQ(applied[1].due_s, 2) << "due when the first missed boundary came";
}

TEST(ScheduleWalker, StopCancelsAndAConstantRateSchedulesNothing) {
  ManualClock clock;
  int calls = 0;
  {
    ScheduleWalker walker(three_steps(), clock, [&](const traces::TraceStep&, double, bool) { ++calls; });
    walker.start();
    walker.stop();
    EXPECT_EQ(clock.pending(), 0u);
    clock.advance_to(20);
    EXPECT_EQ(calls, 1);
  }
  ScheduleWalker constant(RateSchedule(traces::Trace(), 115), clock,
                          [&](const traces::TraceStep& step, double, bool) { EXPECT_EQ(step.mbps, 115); ++calls; });
  constant.start();
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_EQ(calls, 2);
}

TEST(ScheduleWalker, AGoneWalkersPendingCallDoesNothing) {
  ManualClock clock;
  int calls = 0;
  {
    ScheduleWalker walker(three_steps(), clock, [&](const traces::TraceStep&, double, bool) { ++calls; });
    walker.start();
  }  // destroyed: its pending call is cancelled
  clock.advance_to(3);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace st::net
