#pragma once
// The rate one WAN direction is configured with over network time: a trace
// (looping past its end, as traces::Trace defines) or a constant. Shared by
// the replays (ns-3's SetDataRate events, the emulator's HTB changes) and the
// link recorder (which reports the configured rate per second).
//
// Time is "network time": seconds since the backend's network started
// replaying (sim: since SimNetwork was built). Network time t replays trace
// time t + offset (the run's trace offset, TopologyConfig::trace_offset_s):
// a seed may start the replay anywhere in the trace, and every system of
// that seed sees the same stretch.
#include <cstddef>
#include <cstdint>

#include "traces/trace.h"

namespace st::net {

class RateSchedule {
 public:
  // One step of the schedule in force over [start_s, end_s): loop `loop` of
  // the trace, step `index`. Loops are counted with integers so that
  // boundaries never drift or repeat through floating-point error.
  struct Segment {
    uint64_t loop = 0;
    std::size_t index = 0;
    double start_s = 0;
    double end_s = 0;  // +infinity for a constant rate
  };

  RateSchedule() = default;
  // An empty trace means the constant rate `constant_mbps`. Segments are in
  // network time, so the one in force at network time 0 may have started
  // before it (a negative start_s).
  RateSchedule(traces::Trace trace, double constant_mbps, double offset_s = 0);

  bool constant() const { return trace_.empty(); }
  const traces::Trace& trace() const { return trace_; }

  Segment segment_at(double t_s) const;
  Segment next(const Segment& segment) const;
  // The step in force during `segment` (rate, optional delay and loss).
  traces::TraceStep step(const Segment& segment) const;

  double max_mbps() const;
  // Time-weighted mean rate over [t0, t1) (t1 > t0).
  double mean_mbps(double t0_s, double t1_s) const;

 private:
  double loop_start_s(uint64_t loop) const;
  double step_start_s(uint64_t loop, std::size_t index) const;
  Segment segment_in_trace_time(double trace_s) const;
  Segment next_in_trace_time(const Segment& segment) const;
  Segment to_network_time(Segment segment) const;

  traces::Trace trace_;
  double constant_mbps_ = 0;
  double offset_s_ = 0;
};

}  // namespace st::net
