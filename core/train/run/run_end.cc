#include "core/train/run/run_end.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace st::train {

RunEndHandshake::RunEndHandshake(comm::Transport& transport, comm::Mailbox& mailbox, int rank, int world_size)
    : transport_(transport), rank_(rank), world_size_(world_size) {
  for (int peer = 0; peer < world_size_; ++peer) {
    if (peer == rank_) continue;
    mailbox.recv(peer, kRunEndTag, [this, peer](std::exception_ptr error, comm::Message&&) {
      if (error) {
        ++failed_;
        spdlog::warn("rank {}: rank {} failed before saying it was done; this rank finished its run", rank_, peer);
      }
      ++heard_;
    });
  }
}

void RunEndHandshake::announce() {
  if (announced_) return;
  announced_ = true;
  for (int peer = 0; peer < world_size_; ++peer)
    if (peer != rank_) transport_.send(peer, kRunEndTag, {}, [this](std::exception_ptr) { ++told_; });
}

}  // namespace st::train
