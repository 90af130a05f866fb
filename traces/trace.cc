#include "traces/trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace st::traces {
namespace {

std::string located(const std::string& source, std::size_t line, const std::string& what) {
  if (line == 0) return fmt::format("{}: {}", source, what);
  return fmt::format("{}:{}: {}", source, line, what);
}

// Checks one step on its own and against the one before it; `number` is
// 1-based, for the message.
void validate_step(const TraceStep& step, const TraceStep* previous, std::size_t number,
                   const std::string& source) {
  auto fail = [&](const std::string& what) {
    throw TraceError(source, 0, fmt::format("step {} (time {} s): {}", number, step.time_s, what));
  };
  if (!std::isfinite(step.time_s) || step.time_s < 0) fail("time must be finite and >= 0");
  if (previous && !(step.time_s > previous->time_s))
    fail(fmt::format("time must be after the previous step's {} s", previous->time_s));
  if (!(step.mbps >= 0 && step.mbps <= kMaxTraceMbps))
    fail(fmt::format("rate {} Mbps must be in [0, {}]", step.mbps, kMaxTraceMbps));
  if (!std::isfinite(step.delay_ms)) fail("delay must be finite (< 0: not given)");
  if (!(step.loss >= 0 && step.loss < 1)) fail(fmt::format("loss {} must be in [0, 1)", step.loss));
}

}  // namespace

TraceError::TraceError(const std::string& source, std::size_t line, const std::string& what)
    : std::runtime_error(located(source, line, what)), source_(source), line_(line) {}

Trace::Trace(std::vector<TraceStep> steps, std::string source) : steps_(std::move(steps)), source_(std::move(source)) {
  if (steps_.empty()) throw TraceError(source_, 0, "a trace needs at least one step");
  for (std::size_t i = 0; i < steps_.size(); ++i)
    validate_step(steps_[i], i > 0 ? &steps_[i - 1] : nullptr, i + 1, source_);
  // The last step's end must itself be a finite time, or looping breaks.
  if (!std::isfinite(duration_s())) throw TraceError(source_, 0, "the trace's end time is not finite");
}

double Trace::start_s() const { return steps_.empty() ? 0.0 : steps_.front().time_s; }

double Trace::step_end_s(std::size_t i) const {
  if (i + 1 < steps_.size()) return steps_[i + 1].time_s;
  if (steps_.size() == 1) return steps_[i].time_s + 1.0;
  return steps_[i].time_s + (steps_[i].time_s - steps_[i - 1].time_s);
}

double Trace::duration_s() const { return steps_.empty() ? 0.0 : step_end_s(steps_.size() - 1); }

std::size_t Trace::step_index_at(double t_s) const {
  if (steps_.empty()) throw TraceError(source_, 0, "an empty trace has no rate");
  const double end = duration_s();
  double t = t_s;
  if (!(t < end)) {  // past the end (or NaN): loop from 0
    if (!std::isfinite(t)) return 0;
    t = std::fmod(t, end);
  }
  const auto after = std::upper_bound(steps_.begin(), steps_.end(), t,
                                      [](double value, const TraceStep& step) { return value < step.time_s; });
  if (after == steps_.begin()) return 0;  // before the first step: it holds from 0
  return static_cast<std::size_t>(after - steps_.begin()) - 1;
}

const TraceStep& Trace::step_at(double t_s) const { return steps_[step_index_at(t_s)]; }

double Trace::mean_mbps() const {
  if (steps_.empty()) return 0;
  double weighted = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) weighted += steps_[i].mbps * (step_end_s(i) - steps_[i].time_s);
  return weighted / (duration_s() - start_s());
}

double Trace::min_mbps() const {
  double low = std::numeric_limits<double>::infinity();
  for (const auto& step : steps_) low = std::min(low, step.mbps);
  return steps_.empty() ? 0 : low;
}

double Trace::max_mbps() const {
  double high = 0;
  for (const auto& step : steps_) high = std::max(high, step.mbps);
  return high;
}

double Trace::stddev_mbps() const {
  if (steps_.empty()) return 0;
  const double mean = mean_mbps();
  double weighted = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const double deviation = steps_[i].mbps - mean;
    weighted += deviation * deviation * (step_end_s(i) - steps_[i].time_s);
  }
  return std::sqrt(weighted / (duration_s() - start_s()));
}

Trace trace_ending_at(std::vector<TraceStep> steps, double end_s, std::string source) {
  if (steps.empty()) throw TraceError(source, 0, "a trace needs at least one step");
  const double last = steps.back().time_s;
  if (!std::isfinite(end_s) || !(end_s > last))
    throw TraceError(source, 0, fmt::format("end {} s must be after the last step's start {} s", end_s, last));
  const double implied_end = steps.size() == 1 ? last + 1.0 : last + (last - steps[steps.size() - 2].time_s);
  if (std::abs(implied_end - end_s) > 1e-9 * std::max(1.0, end_s)) {
    TraceStep second_half = steps.back();
    second_half.time_s = last + (end_s - last) / 2;
    steps.push_back(second_half);
  }
  return Trace(std::move(steps), std::move(source));
}

}  // namespace st::traces
