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
#include <utility>
#include <vector>

namespace st::comm {

using Rank = int;

struct Message {
  Rank source = -1;
  uint32_t tag = 0;  // matches a send to the receive waiting for it
  std::vector<uint8_t> payload;
  // What the message stood for on the wire when it was sent with
  // send_standing_for() (a sample of a larger message); 0: the payload's size.
  uint64_t wire_bytes = 0;
};

// The bytes `message` took on the wire.
inline uint64_t wire_size(const Message& message) {
  return message.wire_bytes ? message.wire_bytes : message.payload.size();
}

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

  // Sends `payload` as a message of `wire_bytes`: a sample that stands for a
  // larger message (sampled CPU stages in timing mode, docs/sim-compute.md).
  // A simulated network times, counts and delivers it as `wire_bytes`
  // (Message::wire_bytes); the TCP transport pads it to that size on the
  // wire (core/comm/frame.h); the receiver gets the payload. This default,
  // for transports that can do neither (in-process), sends a message whose
  // size is its own and throws std::logic_error for any other, since it
  // would carry the sample and time the wrong thing.
  virtual void send_standing_for(Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                                 SendCallback on_done) {
    if (wire_bytes != payload.size())
      throw std::logic_error("this transport carries messages as they are: a " + std::to_string(payload.size()) +
                             "-byte payload cannot stand for " + std::to_string(wire_bytes) +
                             " bytes (sampled stages need a simulated network)");
    send(destination, tag, std::move(payload), std::move(on_done));
  }

  virtual TransportStats stats() const = 0;

  // Stops all I/O; pending sends complete with an error. Idempotent.
  virtual void close() = 0;
};

}  // namespace st::comm
