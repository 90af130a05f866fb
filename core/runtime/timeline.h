#pragma once
// A run's timeline: every compute task (forward, backward, per-layer gather
// — on a GPU the device-to-host copy and the sum —, compress, optimize, ...)
// and every message send, each with its start and end on the executor's
// clock (wall or virtual time), per node and lane (a worker/GPU, the node's
// CPU, its network). Written as a Chrome trace (chrome://tracing, Perfetto)
// so the overlap of the per-layer pipeline with forward and backward can be
// seen; `stellatrain run --timeline` and `train --timeline` write one.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/runtime/executor.h"

namespace st::runtime {

class Timeline {
 public:
  // Keeps at most `max_spans` (later ones are counted, not kept), so that
  // a long run's file stays readable.
  explicit Timeline(std::size_t max_spans = 200000) : max_spans_(max_spans) {}

  struct Span {
    std::string name;  // "backward", "gather", "send", ...
    int layer = -1;    // -1: whole model or not per layer
    int node = -1;
    int lane = -1;     // worker/GPU index; -1: the node's CPU; kNetworkLane: sends
    Nanos start{0}, end{0};
    uint64_t bytes = 0;  // sends
    int peer = -1;       // sends: the destination
  };
  static constexpr int kNetworkLane = -2;

  void add(Span span);
  std::size_t size() const;
  std::size_t dropped() const;

  // Chrome trace JSON ("traceEvents", complete events in microseconds;
  // process = node, thread = lane). Throws std::runtime_error naming `path`.
  void write_chrome_trace(const std::string& path) const;

 private:
  mutable std::mutex mutex_;
  std::size_t max_spans_;
  std::vector<Span> spans_;
  std::size_t dropped_ = 0;
};

// An Executor decorator that adds each compute task to a Timeline: it
// starts when its work starts and ends when its charge is over (the
// simulated executor's virtual end, the real one's wall-clock end).
// Everything else passes straight through.
class TimelineExecutor final : public Executor {
 public:
  TimelineExecutor(Executor& inner, Timeline& timeline) : inner_(inner), timeline_(timeline) {}

  Nanos now() const override { return inner_.now(); }
  void post(Task task) override { inner_.post(std::move(task)); }
  void post_after(Nanos delay, Task task) override { inner_.post_after(delay, std::move(task)); }
  void compute(Task work, ComputeCost cost, Task done) override;
  void post_progress(int mark, Task task) override { inner_.post_progress(mark, std::move(task)); }
  void run_until(const std::function<bool()>& finished) override { inner_.run_until(finished); }
  int workers() const override { return inner_.workers(); }

 private:
  Executor& inner_;
  Timeline& timeline_;
};

}  // namespace st::runtime
