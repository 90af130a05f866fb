#pragma once
// The trace replayer: one thread on the monotonic clock (the replay's
// net::ReplayClock) on which every WAN direction's rate schedule is walked
// by the walker the sim backend uses too (net/schedule_walker.h), each step
// applied to its LinkShaper at its boundary (an HTB class change over
// netlink, about 10 us), and the shapers' byte counters sampled every
// `sample_interval_s` into a LinkRecorder (a sample due with a step goes
// first: the bytes up to that moment left under the step that ends), so
// that link.csv has the same rows as on the sim backend.
//
// Before start_clock() every link holds the step in force at trace time 0
// (the network is up but the run has not begun); network time 0 is the
// moment start_clock() is called.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <map>
#include <memory>

#include "emu/link_shaper.h"
#include "net/link_recorder.h"
#include "net/schedule_walker.h"

namespace st::emu {

struct LinkRate {
  std::string link;
  double configured_mbps = 0;  // over the last full second
  double delivered_mbps = 0;
};

class LinkReplay {
 public:
  // The shapers must outlive the replay.
  explicit LinkReplay(std::vector<LinkShaper*> shapers, double sample_interval_s = 0.1);
  ~LinkReplay();  // stop()
  LinkReplay(const LinkReplay&) = delete;
  LinkReplay& operator=(const LinkReplay&) = delete;

  void start_clock();
  bool clock_started() const { return started_; }
  // Seconds of network time (0 before start_clock()).
  double now_s() const;
  // Ends the replay (links keep their current step); takes a last sample.
  // Idempotent. Rethrows the first error the thread met (e.g. a netlink
  // failure), so a broken replay is not silent.
  void stop();

  // link.csv rows up to now (or up to the stop).
  std::string link_csv() const;
  std::vector<net::LinkTotals> totals() const;
  // Per link, the last completed second (for progress lines).
  std::vector<LinkRate> last_second() const;
  // Steps applied and the largest lateness of a step change behind its
  // boundary, for the manifest.
  uint64_t steps_applied() const { return steps_applied_; }
  double worst_step_lateness_s() const { return worst_lateness_s_; }

 private:
  // The replay's clock: calls due on the replay thread (ReplayClock), which
  // runs them in (time, order of asking) order.
  class ThreadClock final : public net::ReplayClock {
   public:
    explicit ThreadClock(const LinkReplay& replay) : replay_(replay) {}
    double now_s() const override { return replay_.now_s(); }
    uint64_t call_at(double at_s, std::function<void()> fn) override;
    void cancel(uint64_t handle) override;
    // The earliest call's time (+infinity when none).
    double next_due_s() const;
    // Runs every call due at or before `now_s` (new calls it asks for that
    // are due by then too).
    void run_due(double now_s);

   private:
    const LinkReplay& replay_;
    mutable std::mutex mutex_;
    std::map<std::pair<double, uint64_t>, std::function<void()>> calls_;  // by (due, handle)
    uint64_t next_handle_ = 0;
  };

  void run();
  void walk(double next_sample_s);
  void start_walkers();
  void apply(LinkShaper& shaper, const traces::TraceStep& step, double due_s, bool first);
  void sample(double now_s);

  std::vector<LinkShaper*> shapers_;
  double sample_interval_s_;
  mutable std::mutex mutex_;  // recorder_, last_*, error_
  std::condition_variable wake_;
  net::LinkRecorder recorder_;
  std::vector<LinkCounters> last_counters_;
  double last_sample_s_ = 0;
  double ended_s_ = -1;
  std::atomic<bool> started_{false};
  std::atomic<bool> stopping_{false};
  int64_t origin_ns_ = 0;
  std::atomic<uint64_t> steps_applied_{0};
  std::atomic<double> worst_lateness_s_{0};
  std::string error_;
  ThreadClock clock_{*this};
  std::vector<std::unique_ptr<net::ScheduleWalker>> walkers_;  // after the clock: they cancel on it
  std::thread thread_;
};

}  // namespace st::emu
