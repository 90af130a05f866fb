#pragma once
// The intervals during which a node's per-layer gradient exchanges kept the
// network busy, per iteration, and what the controller reads from them
// (docs/control.md): the union of the intervals (busy time), the quickest
// exchange (a latency sample) and the intervals themselves relative to the
// iteration's first start. Exchanges of several iterations overlap (the
// pipeline), so they are kept per iteration; an iteration's are dropped
// once summarised. Thread-safe.
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/runtime/executor.h"

namespace st::telemetry {

struct ExchangeSummary {
  double busy_ms = 0;      // union of [begin, end)
  double shortest_ms = 0;  // 0 when there was none
  // [begin, end) of each exchange in ms from the earliest begin, flattened
  // (begin0, end0, begin1, ...), in begin order.
  std::vector<double> intervals_ms;
  double origin_ms = 0;    // the earliest begin, on the executor's clock
};

class ExchangeLog {
 public:
  void add(int iteration, runtime::Nanos begin, runtime::Nanos end);
  // The iteration's summary; forgets its intervals.
  ExchangeSummary take(int iteration);

 private:
  std::mutex mutex_;
  std::map<int, std::vector<std::pair<runtime::Nanos, runtime::Nanos>>> by_iteration_;
};

}  // namespace st::telemetry
