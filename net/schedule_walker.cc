#include "net/schedule_walker.h"

namespace st::net {

ScheduleWalker::ScheduleWalker(RateSchedule schedule, ReplayClock& clock, Apply apply)
    : schedule_(std::move(schedule)),
      clock_(clock),
      apply_(std::move(apply)),
      alive_(std::make_shared<ScheduleWalker*>(this)) {}

ScheduleWalker::~ScheduleWalker() { stop(); }

void ScheduleWalker::start() {
  const RateSchedule::Segment segment = schedule_.segment_at(clock_.now_s());
  apply_(schedule_.step(segment), segment.start_s, true);
  schedule_after(segment);
}

void ScheduleWalker::stop() {
  stopped_ = true;
  if (has_pending_) clock_.cancel(pending_);
  has_pending_ = false;
}

void ScheduleWalker::enter(RateSchedule::Segment segment, double due_s) {
  has_pending_ = false;
  if (stopped_) return;
  // A clock that ran late past whole steps applies only the one in force now.
  while (segment.end_s <= clock_.now_s()) segment = schedule_.next(segment);
  apply_(schedule_.step(segment), due_s, false);
  schedule_after(segment);
}

void ScheduleWalker::schedule_after(const RateSchedule::Segment& segment) {
  if (schedule_.constant() || stopped_) return;
  const RateSchedule::Segment following = schedule_.next(segment);
  std::weak_ptr<ScheduleWalker*> weak = alive_;
  pending_ = clock_.call_at(following.start_s, [weak, following]() {
    if (auto self = weak.lock()) (*self)->enter(following, following.start_s);
  });
  has_pending_ = true;
}

}  // namespace st::net
