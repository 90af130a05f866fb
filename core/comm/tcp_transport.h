#pragma once
// The TCP transport: one process per rank, one persistent TCP connection per
// pair of ranks, frames as in frame.h. Usually built by make_tcp_transport()
// (rendezvous.h), which finds the peers through a c10d TCPStore.
//
// Why Asio: it gives portable asynchronous sockets, timers (heartbeats,
// timeouts) and one event loop to run them on, with scatter/gather writes;
// raw epoll code would re-implement that. Gloo's transport was the other
// candidate (it is linked already for the DDP baseline), but its
// unbound-buffer pairs need a gloo context and receives posted in advance
// with known sizes, which does not fit variable-size sparse messages pushed
// to a receive handler.
//
// Threading: one io thread per transport runs every socket operation, every
// timer and every callback (receive handler, error handler, on_done). send()
// may be called from any thread; it hands the message to the io thread.
//
// Connection scheme: each rank listens; rank i dials every rank j < i and
// accepts from every rank above it, so each pair has exactly one connection
// and simultaneous starts need no tie-breaking (a dial that arrives before
// the peer accepts waits in the listen backlog; a refused dial is retried
// until the connect deadline). The dialler sends hello (rank, world size,
// session id); the acceptor checks it and answers with its own hello.
//
// Failure semantics (see docs/transport.md):
// * EOF or reset without a goodbye, a write error, a malformed frame or
//   silence (no byte, not even a heartbeat) for longer than peer_timeout:
//   the peer is reported once to the error handler as a TransportError naming
//   its rank and address; queued and later sends to it fail with that error.
// * Goodbye (the peer called close()): not a failure and not reported by
//   itself; sends to it fail with a TransportError saying it left, and the
//   first such send is reported to the error handler once, so a rank still
//   talking to a peer that left is not silently stuck on it.
// * Receivers waiting for data from a departed peer learn nothing more here:
//   the transport does not know what a receiver expects (peer_departed()
//   tells whether a peer left).
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/transport.h"

namespace st::comm {

struct PeerAddress {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
};

// Parses "host:port" (an IPv6 host in brackets: "[::1]:9000"); throws
// std::invalid_argument naming the text.
PeerAddress parse_peer_address(const std::string& text);

struct TcpTransportConfig {
  Rank rank = 0;
  int world_size = 1;
  uint64_t session_id = 0;  // every rank of one job uses the same value
  std::string listen_host = "0.0.0.0";
  uint16_t listen_port = 0;  // 0: the OS picks one (see listen_port())
  uint64_t max_message_bytes = uint64_t{1} << 30;
  std::chrono::milliseconds heartbeat_interval{1000};  // sent when a link is idle this long
  std::chrono::milliseconds peer_timeout{30000};       // silence after which a peer is failed
  std::chrono::milliseconds handshake_timeout{10000};  // for accepted, unidentified sockets
  std::chrono::milliseconds close_timeout{2000};       // bound on close()'s goodbye exchange
  int socket_buffer_bytes = 0;  // SO_SNDBUF/SO_RCVBUF; 0 keeps Linux's autotuning
};

class TcpTransport final : public Transport {
 public:
  // Binds the listening socket and starts the io thread; accepts peers
  // right away. Throws TransportError when the address cannot be bound.
  explicit TcpTransport(TcpTransportConfig config);
  ~TcpTransport() override;  // close(); must not run on the io thread

  TcpTransport(const TcpTransport&) = delete;
  TcpTransport& operator=(const TcpTransport&) = delete;

  uint16_t listen_port() const;

  // Dials the ranks below this one (peers[j] for j < rank; the other entries
  // are ignored) and waits until every peer is connected both ways. Throws
  // TransportError naming a peer that is missing when `timeout` runs out, or
  // whose handshake failed.
  void connect(const std::vector<PeerAddress>& peers, std::chrono::milliseconds timeout);

  // True once `peer` has said goodbye.
  bool peer_departed(Rank peer) const;

  Rank rank() const override;
  int world_size() const override;
  void on_receive(ReceiveHandler handler) override;
  void on_error(ErrorHandler handler) override;
  // Sends completing with an error: payload above max_message_bytes, peer
  // failed or departed, transport closed (after close() on_done runs at once,
  // on the calling thread). A destination outside the world is a caller bug:
  // std::invalid_argument, as in the in-process transport.
  void send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done) override;
  // A sample standing for `wire_bytes` (a sampled timing run paced on real
  // sockets): padding frames of wire_bytes - payload bytes go first, then
  // the data frame, so the kernel carries and times the whole message and
  // the receiver's Message::wire_bytes says what it stood for
  // (core/comm/frame.h). stats() counts payload bytes only.
  void send_standing_for(Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                         SendCallback on_done) override;
  TransportStats stats() const override;
  // Sends goodbye to every connected peer (after the frame being written, if
  // any; queued sends complete with an error) and waits, at most
  // close_timeout, for their EOF. Callable from a handler (then it does not
  // wait; the destructor, run elsewhere, joins the io thread).
  void close() override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::comm
