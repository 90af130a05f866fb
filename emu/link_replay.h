#pragma once
// The trace replayer: one thread that walks every WAN direction's rate
// schedule in real time, applies each step to its LinkShaper at the step's
// boundary (an HTB class change over netlink, about 10 us), and samples the
// shapers' byte counters every `sample_interval_s` into a LinkRecorder, so
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

#include "emu/link_shaper.h"
#include "net/link_recorder.h"

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
  void run();
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
  std::thread thread_;
};

}  // namespace st::emu
