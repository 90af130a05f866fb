#pragma once
// The ns-3 Transport (the Transport seam, docs/architecture.md): one endpoint per engine node of a
// SimNetwork, all sharing one fabric of persistent ns-3 TCP connections (one
// socket per ordered node pair, opened when the network is built).
//
// What travels: each message is a 12-byte frame header (tag, length) plus
// its payload's length of stream bytes on the pair's TCP connection. The
// payload itself is kept aside in C++ memory (both ends live in this
// process) and handed to the receive handler at the simulated time the
// message's last byte is received in order at the destination node.
//
// Semantics, beyond transport.h:
// * Single-threaded: call everything from the ns-3 thread (inside the event
//   loop, or before Simulator::Run()); this is not the thread-safe send()
//   of the real transports. No wall clock is involved.
// * No callback ever runs inside send() or inside an ns-3 socket callback:
//   on_done, the receive handler and the error handler are scheduled with
//   Simulator::ScheduleNow, so user code may call send() again freely.
// * on_done(nullptr) fires once every byte of the message has been handed to
//   the sender's TCP socket (socket buffers are large, see topology.h).
// * A rank's send to itself is delivered one ScheduleNow later, no network.
// * close() (idempotent): queued sends of this rank that are not yet fully
//   handed to TCP complete with a TransportError, its sockets close
//   gracefully (bytes already handed still arrive), and nothing more is
//   delivered to it. Like the TCP transport's goodbye, a closed rank is not
//   reported as a failure by itself: sends to it (queued or new) complete
//   with a TransportError naming it, and the first such failure is reported
//   once to the sender's error handler. A TCP connection that fails
//   (connect refused, reset) is reported to both ends' error handlers.
// * A destination outside the world is a caller bug: std::invalid_argument.
// * A message that arrives before a receive handler is installed is dropped
//   (and counted in dropped_messages()).
#include <cstdint>
#include <memory>

#include "core/comm/transport.h"

namespace st::sim {

class Ns3Fabric;

class Ns3Transport final : public comm::Transport {
 public:
  Ns3Transport(std::shared_ptr<Ns3Fabric> fabric, comm::Rank rank);

  comm::Rank rank() const override { return rank_; }
  int world_size() const override;
  void on_receive(comm::ReceiveHandler handler) override;
  void on_error(comm::ErrorHandler handler) override;
  void send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, comm::SendCallback on_done) override;
  void send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                         comm::SendCallback on_done) override;
  comm::TransportStats stats() const override;
  void close() override;

  // Stream bytes (frame headers included) received in order from `source`
  // so far, counted as they arrive rather than per message: goodput probes.
  uint64_t stream_bytes_from(comm::Rank source) const;
  uint64_t dropped_messages() const;

 private:
  std::shared_ptr<Ns3Fabric> fabric_;
  const comm::Rank rank_;
};

}  // namespace st::sim
