#include "net/rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace st::net {

RateSchedule::RateSchedule(traces::Trace trace, double constant_mbps, double offset_s)
    : trace_(std::move(trace)), constant_mbps_(constant_mbps), offset_s_(offset_s) {
  if (!(offset_s >= 0) || !std::isfinite(offset_s))
    throw std::invalid_argument("RateSchedule: the trace offset must be a finite number of seconds >= 0");
}

double RateSchedule::loop_start_s(uint64_t loop) const { return static_cast<double>(loop) * trace_.duration_s(); }

// Within every loop the first step holds from the loop's start, even when the
// trace's first row is later than 0 (traces::Trace::step_at does the same).
double RateSchedule::step_start_s(uint64_t loop, std::size_t index) const {
  return loop_start_s(loop) + (index == 0 ? 0.0 : trace_.steps()[index].time_s);
}

// With offset 0 (the default) network and trace time are one, bit for bit.
RateSchedule::Segment RateSchedule::to_network_time(Segment segment) const {
  if (offset_s_ == 0) return segment;
  segment.start_s -= offset_s_;
  segment.end_s -= offset_s_;
  return segment;
}

RateSchedule::Segment RateSchedule::segment_at(double t_s) const {
  if (constant()) return Segment{0, 0, 0.0, std::numeric_limits<double>::infinity()};
  return to_network_time(segment_in_trace_time(std::max(0.0, t_s) + offset_s_));
}

// Only a segment's loop and index matter to what follows it.
RateSchedule::Segment RateSchedule::next(const Segment& segment) const {
  if (constant()) return segment;
  return to_network_time(next_in_trace_time(segment));
}

RateSchedule::Segment RateSchedule::segment_in_trace_time(double t) const {
  auto loop = static_cast<uint64_t>(std::floor(t / trace_.duration_s()));
  // floor() of a time a hair below a loop boundary can land one loop late.
  while (loop > 0 && loop_start_s(loop) > t) --loop;
  const std::size_t index = trace_.step_index_at(t - loop_start_s(loop));
  Segment segment{loop, index, step_start_s(loop, index), 0.0};
  segment.end_s = next_in_trace_time(segment).start_s;
  // Guard against a boundary that rounding put on the wrong side of t.
  while (segment.end_s <= t) segment = next_in_trace_time(segment);
  return segment;
}

RateSchedule::Segment RateSchedule::next_in_trace_time(const Segment& segment) const {
  Segment following{segment.loop, segment.index + 1, 0.0, 0.0};
  if (following.index == trace_.steps().size()) following = Segment{segment.loop + 1, 0, 0.0, 0.0};
  following.start_s = step_start_s(following.loop, following.index);
  const bool last = following.index + 1 == trace_.steps().size();
  following.end_s = last ? loop_start_s(following.loop + 1) : step_start_s(following.loop, following.index + 1);
  return following;
}

traces::TraceStep RateSchedule::step(const Segment& segment) const {
  if (constant()) {
    traces::TraceStep step;
    step.mbps = constant_mbps_;
    return step;
  }
  return trace_.steps()[segment.index];
}

double RateSchedule::max_mbps() const { return constant() ? constant_mbps_ : trace_.max_mbps(); }

double RateSchedule::mean_mbps(double t0_s, double t1_s) const {
  if (!(t1_s > t0_s)) throw std::invalid_argument("RateSchedule::mean_mbps: empty interval");
  if (constant()) return constant_mbps_;
  double megabits = 0;
  for (Segment segment = segment_at(t0_s); segment.start_s < t1_s; segment = next(segment)) {
    const double overlap = std::min(segment.end_s, t1_s) - std::max(segment.start_s, t0_s);
    if (overlap > 0) megabits += overlap * trace_.steps()[segment.index].mbps;
  }
  return megabits / (t1_s - t0_s);
}

}  // namespace st::net
