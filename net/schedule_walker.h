#pragma once
// Walks one WAN direction's RateSchedule on a clock: applies the step in
// force when started, then each following step at its boundary, one pending
// call at a time (a looping trace costs one). It is the one trace walker of
// both backends; only the clock differs: the ns-3 backend's is the
// simulator's event queue (sim/link_replay.cc), the emulator's a timer
// thread on the monotonic clock (emu/link_replay.cc).
//
// Why a clock of its own rather than the engine's runtime::Executor: the
// sim executor counts every task it runs as engine progress (its deadlock
// watchdog) and checks whether the run is over after each one (its time
// budget), so replay steps run as executor tasks would change when runs
// stop; and the emulator's launcher has no executor at all.
#include <cstdint>
#include <functional>
#include <memory>

#include "net/rate_schedule.h"

namespace st::net {

class ReplayClock {
 public:
  virtual ~ReplayClock() = default;
  // Network time: seconds since trace time 0.
  virtual double now_s() const = 0;
  // Calls `fn` once network time reaches `at_s` (as soon as possible when it
  // has already); the handle cancels it.
  virtual uint64_t call_at(double at_s, std::function<void()> fn) = 0;
  virtual void cancel(uint64_t handle) = 0;
};

class ScheduleWalker {
 public:
  // `due_s`: the boundary at which the step was due (the clock may run late;
  // late steps that were already over are skipped); `first`: the step in
  // force when the walk started.
  using Apply = std::function<void(const traces::TraceStep& step, double due_s, bool first)>;

  // The clock must outlive the walker.
  ScheduleWalker(RateSchedule schedule, ReplayClock& clock, Apply apply);
  ~ScheduleWalker();
  ScheduleWalker(const ScheduleWalker&) = delete;
  ScheduleWalker& operator=(const ScheduleWalker&) = delete;

  const RateSchedule& schedule() const { return schedule_; }
  void start();
  // No further steps (the link keeps its current one). Idempotent.
  void stop();

 private:
  void enter(RateSchedule::Segment segment, double due_s);
  void schedule_after(const RateSchedule::Segment& segment);

  RateSchedule schedule_;
  ReplayClock& clock_;
  Apply apply_;
  std::shared_ptr<ScheduleWalker*> alive_;  // pending calls hold a weak copy
  uint64_t pending_ = 0;
  bool has_pending_ = false;
  bool stopped_ = false;
};

}  // namespace st::net
