#pragma once
// The trace model (the link-shaping seam, docs/architecture.md): a piecewise-constant link rate over
// time, with an optional one-way delay and loss rate per step. One model for
// both backends: ns-3 replays it with SetDataRate events, the emulator with
// HTB class changes.
//
// Step i holds from steps[i].time_s until steps[i+1].time_s. The last step
// holds for as long as the interval before it (a 1 s trace with rows at
// 0..299 lasts 300 s); a one-row trace lasts 1 s. Past duration_s() the
// trace loops from its start (rate_at(t) == rate_at(fmod(t, duration))).
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace st::traces {

struct TraceStep {
  double time_s = 0;     // start of the step, >= 0, strictly increasing
  double mbps = 0;       // link rate, >= 0 (0: outage)
  double delay_ms = -1;  // one-way delay for this step; < 0: not given (use the link's)
  double loss = 0;       // packet loss probability in [0, 1)
};

// Rates above this (1 Pbit/s) are mistakes, and would overflow statistics.
inline constexpr double kMaxTraceMbps = 1e9;

// A bad trace: names the file (or "<string>") and the 1-based line.
class TraceError : public std::runtime_error {
 public:
  TraceError(const std::string& source, std::size_t line, const std::string& what);
  const std::string& source() const { return source_; }
  std::size_t line() const { return line_; }  // 0: not about one line

 private:
  std::string source_;
  std::size_t line_;
};

class Trace {
 public:
  Trace() = default;
  // Validates (non-empty, first time 0 or later, strictly increasing times,
  // finite non-negative rates up to kMaxTraceMbps, loss in [0,1)); throws
  // TraceError naming `source` otherwise.
  explicit Trace(std::vector<TraceStep> steps, std::string source = "<generated>");

  const std::vector<TraceStep>& steps() const { return steps_; }
  const std::string& source() const { return source_; }
  bool empty() const { return steps_.empty(); }

  double start_s() const;     // time of the first step
  double duration_s() const;  // end of the last step (see above)
  // The step in force at time t (looping past the end; t < start: first step).
  const TraceStep& step_at(double t_s) const;
  double rate_at(double t_s) const { return step_at(t_s).mbps; }

  // Time-weighted statistics over [start, duration).
  double mean_mbps() const;
  double min_mbps() const;
  double max_mbps() const;
  double stddev_mbps() const;  // time-weighted population standard deviation

  // Index of the step in force at t (same rules as step_at).
  std::size_t step_index_at(double t_s) const;
  // End of step i (the next step's start; for the last step, see above).
  double step_end_s(std::size_t i) const;

 private:
  std::vector<TraceStep> steps_;
  std::string source_;
};

// Builds a trace whose last step ends exactly at end_s (> the last step's
// start), whatever the spacing before it: when the usual rule (the last step
// lasts as long as the interval before it) would not end at end_s, the last
// step is split into two equal halves with the same values. Transforms and
// generators use it so that a trace keeps the duration it was made for.
Trace trace_ending_at(std::vector<TraceStep> steps, double end_s, std::string source = "<generated>");

}  // namespace st::traces
