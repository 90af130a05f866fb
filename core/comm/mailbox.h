#pragma once
// Matches a Transport's incoming messages to posted receives by
// (source, tag). Whichever comes first waits for the other: a message that
// arrives early is buffered, a receive posted early is kept pending. Several
// messages or receives with one key pair up first-in first-out.
//
// The mailbox installs itself as the transport's receive and error handler
// (construct it before the first send from any rank); other parts that want
// transport errors subscribe through Mailbox::on_error().
//
// Errors never leave a receive waiting forever:
// * a TransportError naming peer p fails every pending receive from p, and
//   every later receive from p that has no buffered message;
// * a TransportError naming this rank itself, or no peer (-1), means this
//   endpoint is gone: every pending and later receive fails.
// Messages that arrived before the error are still handed out.
//
// Callbacks run outside the mailbox lock: on the transport's thread when a
// message arrives, or inside recv() when the message (or the error) is
// already there. They must not block.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>

#include "core/comm/transport.h"

namespace st::comm {

// `error` is null on success; then `message` holds the message.
using ReceiveCallback = std::function<void(std::exception_ptr error, Message&& message)>;

class Mailbox {
 public:
  using ReceiveId = uint64_t;

  explicit Mailbox(Transport& transport);
  // Pending receives are dropped without being called. Safe to destroy
  // before the transport: the installed handlers keep the shared state.
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  Transport& transport() const;

  // Fires `callback` once with the next message from `source` with `tag`,
  // or with the error that makes it impossible. Returns an id for cancel().
  ReceiveId recv(Rank source, uint32_t tag, ReceiveCallback callback);

  // Drops a pending receive without calling it; false if it already fired.
  bool cancel(ReceiveId id);

  // Also called for every transport error (after pending receives failed).
  void on_error(ErrorHandler handler);

  std::size_t buffered_messages() const;
  std::size_t pending_receives() const;

  class State;

 private:
  Transport& transport_;
  std::shared_ptr<State> state_;
};

}  // namespace st::comm
