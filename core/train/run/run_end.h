#pragma once
// The end of a run that spans processes (the TCP transport, one rank per
// process: the emulator's nodes). A rank must not close its transport while
// a peer still sends to it: with staleness a rank can finish its last
// iteration before a peer's last exchange, telemetry or plan has left, and
// the peer then meets a goodbye with sends pending and fails the run (seen
// on the emulator: rank 0 done with 100 iterations while rank 1 still sent
// its 100th). So each rank, once its node is finished and idle, tells every
// other rank, and closes only when it has heard from all of them: messages
// on one connection arrive in order, so a peer's word comes after
// everything it sent here.
#include <atomic>
#include <cstdint>
#include <string>

#include "core/comm/control_tags.h"
#include "core/comm/mailbox.h"
#include "core/comm/transport.h"

namespace st::train {

constexpr uint32_t kRunEndTag = comm::control_tags::kRunEnd;

class RunEndHandshake {
 public:
  // Listens for every other rank's word at once (before training starts,
  // so an early peer's word is kept).
  RunEndHandshake(comm::Transport& transport, comm::Mailbox& mailbox, int rank, int world_size);

  // Tells every other rank this one is done; idempotent.
  void announce();
  // True once every other rank has said it is done, or failed (its
  // failure is the peer's own, reported by its process), and this rank's
  // own word has left: closing the transport drops sends still queued.
  bool everyone_done() const { return heard_.load() == world_size_ - 1 && told_.load() == world_size_ - 1; }
  // Peers whose connection failed instead of saying so.
  int failed_peers() const { return failed_.load(); }

 private:
  comm::Transport& transport_;
  const int rank_;
  const int world_size_;
  std::atomic<int> heard_{0};
  std::atomic<int> told_{0};  // announcements sent (or failed: that peer is gone)
  std::atomic<int> failed_{0};
  bool announced_ = false;
};

}  // namespace st::train
