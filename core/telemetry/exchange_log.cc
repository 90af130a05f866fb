#include "core/telemetry/exchange_log.h"

#include <algorithm>
#include <chrono>

namespace st::telemetry {
namespace {

double ms(runtime::Nanos d) { return std::chrono::duration<double, std::milli>(d).count(); }

}  // namespace

void ExchangeLog::add(int iteration, runtime::Nanos begin, runtime::Nanos end) {
  std::lock_guard<std::mutex> lock(mutex_);
  by_iteration_[iteration].push_back({begin, end});
}

ExchangeSummary ExchangeLog::take(int iteration) {
  std::vector<std::pair<runtime::Nanos, runtime::Nanos>> intervals;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = by_iteration_.find(iteration);
    if (it != by_iteration_.end()) {
      intervals = std::move(it->second);
      by_iteration_.erase(it);
    }
  }
  std::sort(intervals.begin(), intervals.end());
  ExchangeSummary out;
  runtime::Nanos busy{0}, covered_to{0}, shortest = runtime::Nanos::max();
  for (const auto& [begin, end] : intervals) {  // the union of [begin, end)
    busy += std::max(runtime::Nanos{0}, end - std::max(begin, covered_to));
    covered_to = std::max(covered_to, end);
    shortest = std::min(shortest, end - begin);
  }
  out.busy_ms = ms(busy);
  out.shortest_ms = intervals.empty() ? 0 : ms(shortest);
  out.origin_ms = intervals.empty() ? 0 : ms(intervals.front().first);
  for (const auto& [begin, end] : intervals) {
    out.intervals_ms.push_back(ms(begin - intervals.front().first));
    out.intervals_ms.push_back(ms(end - intervals.front().first));
  }
  return out;
}

}  // namespace st::telemetry
