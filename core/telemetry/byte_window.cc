#include "core/telemetry/byte_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace st::telemetry {

uint64_t WindowTotals::total_sent() const { return std::accumulate(sent.begin(), sent.end(), uint64_t{0}); }
uint64_t WindowTotals::total_received() const {
  return std::accumulate(received.begin(), received.end(), uint64_t{0});
}

ByteWindow::ByteWindow(int peers, Nanos window, int sub_windows) : peers_(peers), window_(window) {
  if (peers < 1) throw std::invalid_argument(fmt::format("ByteWindow: peers must be >= 1, got {}", peers));
  if (window.count() <= 0 || sub_windows < 1 || sub_windows > window.count())
    throw std::invalid_argument(fmt::format("ByteWindow: window {} ns cannot hold {} sub-windows", window.count(),
                                            sub_windows));
  sub_window_ = window / sub_windows;
  slots_.resize(static_cast<std::size_t>(sub_windows) + 1);  // the current, partly elapsed one too
  for (auto& s : slots_) s.sent.assign(static_cast<std::size_t>(peers), 0), s.received.assign(static_cast<std::size_t>(peers), 0);
}

void ByteWindow::check_peer(int peer) const {
  if (peer < 0 || peer >= peers_)
    throw std::invalid_argument(fmt::format("ByteWindow: peer {} is outside [0, {})", peer, peers_));
}

ByteWindow::Slot& ByteWindow::slot_for(Nanos now) {
  const int64_t number = now.count() / sub_window_.count();
  Slot& slot = slots_[static_cast<std::size_t>(number % static_cast<int64_t>(slots_.size()))];
  if (slot.number != number) {  // an old sub-window's slot is reused
    slot.number = number;
    std::fill(slot.sent.begin(), slot.sent.end(), 0);
    std::fill(slot.received.begin(), slot.received.end(), 0);
  }
  return slot;
}

void ByteWindow::add_sent(int peer, uint64_t bytes, Nanos now) {
  check_peer(peer);
  std::lock_guard<std::mutex> lock(mutex_);
  slot_for(now).sent[static_cast<std::size_t>(peer)] += bytes;
}

void ByteWindow::add_received(int peer, uint64_t bytes, Nanos now) {
  check_peer(peer);
  std::lock_guard<std::mutex> lock(mutex_);
  slot_for(now).received[static_cast<std::size_t>(peer)] += bytes;
}

WindowTotals ByteWindow::totals(Nanos now) const {
  WindowTotals t;
  t.sent.assign(static_cast<std::size_t>(peers_), 0);
  t.received.assign(static_cast<std::size_t>(peers_), 0);
  const int64_t current = now.count() / sub_window_.count();
  const int64_t oldest = std::max<int64_t>(0, current - static_cast<int64_t>(slots_.size()) + 1);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& slot : slots_) {
    if (slot.number < oldest || slot.number > current) continue;
    for (int p = 0; p < peers_; ++p) {
      t.sent[static_cast<std::size_t>(p)] += slot.sent[static_cast<std::size_t>(p)];
      t.received[static_cast<std::size_t>(p)] += slot.received[static_cast<std::size_t>(p)];
    }
  }
  t.span = now - oldest * sub_window_;  // from the oldest counted sub-window's start
  return t;
}

}  // namespace st::telemetry
