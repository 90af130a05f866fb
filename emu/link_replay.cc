#include "emu/link_replay.h"
#include "emu/monotonic_clock.h"
#include "emu/realtime_thread.h"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace st::emu {

LinkReplay::LinkReplay(std::vector<LinkShaper*> shapers, double sample_interval_s)
    : shapers_(std::move(shapers)), sample_interval_s_(sample_interval_s) {
  for (LinkShaper* shaper : shapers_) recorder_.add_link(shaper->direction().name, shaper->direction().schedule);
  last_counters_.resize(shapers_.size());
  thread_ = std::thread([this] { run(); });
}

LinkReplay::~LinkReplay() {
  try {
    stop();
  } catch (...) {
    // The destructor runs on error paths too: the replay's error was (or
    // will be) reported by whoever called stop() first.
  }
}

void LinkReplay::start_clock() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_) return;
    origin_ns_ = monotonic_ns();
    started_ = true;
  }
  wake_.notify_all();
}

double LinkReplay::now_s() const {
  if (!started_) return 0;
  return static_cast<double>(monotonic_ns() - origin_ns_) / 1e9;
}

void LinkReplay::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!error_.empty()) {
    const std::string error = error_;
    error_.clear();  // reported once
    throw EmuError("trace replay: " + error);
  }
}

void LinkReplay::sample(double now_s) {
  std::vector<LinkCounters> current;
  for (LinkShaper* shaper : shapers_) current.push_back(shaper->counters());
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < shapers_.size(); ++i) {
    const uint64_t bytes = current[i].bytes - last_counters_[i].bytes;
    const uint64_t packets = current[i].packets - last_counters_[i].packets;
    recorder_.record_interval(static_cast<int>(i), last_sample_s_, now_s, bytes, packets);
  }
  last_counters_ = std::move(current);
  last_sample_s_ = now_s;
}

uint64_t LinkReplay::ThreadClock::call_at(double at_s, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t handle = next_handle_++;
  calls_.emplace(std::make_pair(at_s, handle), std::move(fn));
  return handle;
}

void LinkReplay::ThreadClock::cancel(uint64_t handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = calls_.begin(); it != calls_.end(); ++it)
    if (it->first.second == handle) {
      calls_.erase(it);
      return;
    }
}

double LinkReplay::ThreadClock::next_due_s() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return calls_.empty() ? std::numeric_limits<double>::infinity() : calls_.begin()->first.first;
}

void LinkReplay::ThreadClock::run_due(double now_s) {
  for (;;) {
    std::function<void()> call;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (calls_.empty() || calls_.begin()->first.first > now_s) return;
      call = std::move(calls_.begin()->second);
      calls_.erase(calls_.begin());
    }
    call();  // may ask for the next call
  }
}

void LinkReplay::apply(LinkShaper& shaper, const traces::TraceStep& step, double due_s, bool first) {
  shaper.apply(step);
  if (first) return;  // the step in force at the start, not a change
  ++steps_applied_;
  const double late = now_s() - due_s;
  if (late > worst_lateness_s_) worst_lateness_s_ = late;
}

void LinkReplay::start_walkers() {
  for (LinkShaper* shaper : shapers_) {
    walkers_.push_back(std::make_unique<net::ScheduleWalker>(
        shaper->direction().schedule, clock_,
        [this, shaper](const traces::TraceStep& step, double due_s, bool first) { apply(*shaper, step, due_s, first); }));
    walkers_.back()->start();
  }
}

// Waits for the next sample or step, whichever is due first, until stopped.
void LinkReplay::walk(double next_sample_s) {
  for (;;) {
    const double next = std::min(next_sample_s, clock_.next_due_s());
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto deadline = std::chrono::steady_clock::time_point(
          std::chrono::nanoseconds(origin_ns_ + static_cast<int64_t>(std::min(next, 1e9) * 1e9)));
      wake_.wait_until(lock, deadline, [this] { return stopping_.load(); });
      if (stopping_) return;
    }
    const double now = now_s();
    // Sample before applying a step that starts now: the bytes counted up
    // to this moment left under the step that is ending.
    if (now >= next_sample_s) {
      sample(now);
      next_sample_s = (std::floor(now / sample_interval_s_) + 1) * sample_interval_s_;
    }
    clock_.run_due(now);
  }
}

void LinkReplay::run() {
  prctl(PR_SET_TIMERSLACK, 1UL);
  run_ahead_of_processes();  // steps and samples on time on a busy host (emu/realtime_thread.h)
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wake_.wait(lock, [this] { return started_ || stopping_; });
    if (!started_) return;
  }
  try {
    // Counters start at the clock: traffic before it (set-up, rendezvous) is not counted.
    std::vector<LinkCounters> baseline;
    for (LinkShaper* shaper : shapers_) baseline.push_back(shaper->counters());
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_counters_ = baseline;
      last_sample_s_ = 0;
    }
    start_walkers();
    walk(sample_interval_s_);
    const double end = now_s();
    sample(end);
    std::lock_guard<std::mutex> lock(mutex_);
    ended_s_ = end;
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = e.what();
    ended_s_ = last_sample_s_;
  }
}

std::string LinkReplay::link_csv() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorder_.csv(ended_s_ >= 0 ? ended_s_ : last_sample_s_);
}

std::vector<net::LinkTotals> LinkReplay::totals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return recorder_.totals();
}

std::vector<LinkRate> LinkReplay::last_second() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LinkRate> rates;
  const auto whole = static_cast<int64_t>(std::floor(last_sample_s_));
  if (whole < 1) return rates;
  for (const auto& row : recorder_.rows(static_cast<double>(whole)))
    if (row.second == whole - 1) rates.push_back({row.link, row.configured_mbps, row.delivered_mbps});
  return rates;
}

}  // namespace st::emu
