#pragma once
// The Transport seam (docs/architecture.md): asynchronous, message-framed, one
// implementation per backend (in-process for tests, TCP for real runs, ns-3
// for simulation), reached through a factory.
//
// Semantics every implementation keeps:
// * send() is thread-safe and never blocks; `on_done` runs exactly once, with
//   nullptr when the message has been handed to the network (all bytes
//   written) or with the error that stopped it.
// * Messages from one source to one destination arrive in the order sent.
// * A rank may send to itself.
// * The receive handler runs on a transport thread and must not block; it
//   owns the message it is given.
// * A peer that disappears (connection lost, silent past the configured
//   timeout) is reported once to the error handler as a TransportError that
//   names the peer; pending sends to it complete with that error.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace st::comm {

using Rank = int;

struct Message {
  Rank source = -1;
  uint32_t tag = 0;  // matches a send to the receive waiting for it
  std::vector<uint8_t> payload;
};

class TransportError : public std::runtime_error {
 public:
  TransportError(Rank peer, const std::string& what) : std::runtime_error(what), peer_(peer) {}
  Rank peer() const { return peer_; }  // -1 when no single peer is to blame

 private:
  Rank peer_;
};

struct TransportStats {
  uint64_t bytes_sent = 0;      // payload bytes, frames excluded
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
};

using SendCallback = std::function<void(std::exception_ptr error)>;
using ReceiveHandler = std::function<void(Message&& message)>;
using ErrorHandler = std::function<void(const TransportError& error)>;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Rank rank() const = 0;
  virtual int world_size() const = 0;

  // Install both handlers before the first send (from any rank).
  virtual void on_receive(ReceiveHandler handler) = 0;
  virtual void on_error(ErrorHandler handler) = 0;

  virtual void send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done) = 0;

  virtual TransportStats stats() const = 0;

  // Stops all I/O; pending sends complete with an error. Idempotent.
  virtual void close() = 0;
};

}  // namespace st::comm
