#pragma once
// A sample for the bandwidth estimator's tests: one node's iteration with
// `busy_ms` of exchange, its quickest exchange `shortest_ms` (20 ms: the
// path's one-way latency), `bytes` received, `wait_ms` of forward wait
// and 14 ms of backward.
#include "core/control/bandwidth_estimator.h"

namespace st {

inline control::ExchangeSample exchange(double busy_ms, double bytes, double wait_ms = 0, double shortest_ms = 20) {
  control::ExchangeSample s;
  s.busy_ms = busy_ms;
  s.shortest_ms = shortest_ms;
  s.bytes = bytes;
  s.wait_ms = wait_ms;
  s.backward_ms = 14;
  return s;
}

}  // namespace st
