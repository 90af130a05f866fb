#pragma once
// Bytes sent to and received from each peer over the last window of the
// executor's clock (default 1 s in 100 ms sub-windows), so a rate means the
// same in virtual time (sim backend) and wall time (real, emu). A ring of
// sub-windows: adding is O(1), reading sums at most `sub_windows` slots.
// Thread-safe.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <vector>

namespace st::telemetry {

using Nanos = std::chrono::nanoseconds;

struct WindowTotals {
  std::vector<uint64_t> sent;      // per peer
  std::vector<uint64_t> received;  // per peer
  Nanos span{0};                   // the time the totals cover (shorter at the start of a run)

  uint64_t total_sent() const;
  uint64_t total_received() const;
};

class ByteWindow {
 public:
  // Throws std::invalid_argument unless peers >= 1, window > 0 and
  // 1 <= sub_windows <= window in nanoseconds.
  explicit ByteWindow(int peers, Nanos window = std::chrono::seconds(1), int sub_windows = 10);

  void add_sent(int peer, uint64_t bytes, Nanos now);
  void add_received(int peer, uint64_t bytes, Nanos now);

  // Totals of the sub-windows that overlap (now - window, now] (so up to one
  // sub-window more than `window`; `span` says exactly what is covered);
  // `now` must not go backwards between calls (the executor clock never does).
  WindowTotals totals(Nanos now) const;

  int peers() const { return peers_; }

 private:
  struct Slot {
    int64_t number = -1;  // which sub-window (now / sub_window) the counts belong to
    std::vector<uint64_t> sent, received;
  };
  Slot& slot_for(Nanos now);
  void check_peer(int peer) const;

  int peers_;
  Nanos window_, sub_window_;
  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
};

}  // namespace st::telemetry
