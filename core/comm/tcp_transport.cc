#include "core/comm/tcp_transport.h"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/comm/tcp_transport_impl.h"

namespace st::comm {
namespace {

using detail::ConnectionState;
using detail::OutgoingFrame;

// User callbacks run on the io thread; one that throws must not stop it.
template <typename Callback, typename... Args>
void invoke_guarded(const char* what, const Callback& callback, Args&&... args) {
  try {
    callback(std::forward<Args>(args)...);
  } catch (const std::exception& error) {
    spdlog::error("tcp transport: {} threw: {}", what, error.what());
  } catch (...) {
    spdlog::error("tcp transport: {} threw a non-standard exception", what);
  }
}

void validate(const TcpTransportConfig& config) {
  if (config.world_size < 1) throw std::invalid_argument(fmt::format("world_size {} < 1", config.world_size));
  if (config.rank < 0 || config.rank >= config.world_size) {
    throw std::invalid_argument(fmt::format("rank {} outside [0, {})", config.rank, config.world_size));
  }
  if (config.heartbeat_interval.count() <= 0 || config.peer_timeout < 2 * config.heartbeat_interval) {
    throw std::invalid_argument(fmt::format("peer_timeout ({} ms) must be at least twice heartbeat_interval ({} ms)",
                                            config.peer_timeout.count(), config.heartbeat_interval.count()));
  }
}

// Message::wire_bytes of a message whose payload came after `padding`
// bytes of padding frames: 0 (its own size) when there were none.
uint64_t stood_for_with(std::size_t payload_bytes, uint64_t padding) {
  return padding > 0 ? payload_bytes + padding : 0;
}

}  // namespace

// --- construction and the public API ------------------------------------------

TcpTransport::Impl::Impl(TcpTransportConfig config_in)
    : config((validate(config_in), std::move(config_in))),
      work_(asio::make_work_guard(io_)),
      acceptor_(io_),
      tick_timer_(io_),
      close_timer_(io_),
      peers_(config.world_size),
      dials_(config.world_size),
      connected_(config.world_size, false),
      departed_(config.world_size, false),
      dial_errors_(config.world_size) {
  connected_[config.rank] = true;
  open_listener();
  accept_next();
  schedule_tick();
  io_thread_ = std::thread([this] { run_io(); });
  io_thread_id_ = io_thread_.get_id();
}

TcpTransport::Impl::~Impl() {
  if (std::this_thread::get_id() == io_thread_id_) {
    // It would free the state its own thread is running on.
    spdlog::critical("tcp transport rank {}: destroyed from one of its own handlers", config.rank);
    std::abort();
  }
  close();
}

void TcpTransport::Impl::run_io() {
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& error) {
      spdlog::error("tcp transport rank {}: io thread caught: {}", config.rank, error.what());
    }
  }
}

void TcpTransport::Impl::configure_socket(asio::ip::tcp::socket& socket) const {
  std::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  if (config.socket_buffer_bytes > 0) {
    socket.set_option(asio::socket_base::send_buffer_size(config.socket_buffer_bytes), ignored);
    socket.set_option(asio::socket_base::receive_buffer_size(config.socket_buffer_bytes), ignored);
  }
}

TcpTransport::Impl::Connection TcpTransport::Impl::make_connection(asio::ip::tcp::socket socket) {
  FrameLimits limits;
  limits.max_payload_bytes = config.max_message_bytes;
  limits.world_size = config.world_size;
  return std::make_shared<detail::TcpConnection>(std::move(socket), limits, *this);
}

bool TcpTransport::Impl::peer_departed(Rank peer) const {
  std::lock_guard lock(mutex_);
  return peer >= 0 && peer < config.world_size && departed_[peer];
}

void TcpTransport::Impl::install_receive_handler(ReceiveHandler handler) {
  asio::post(io_, [this, handler = std::move(handler)]() mutable {
    receive_handler_ = std::move(handler);
    while (receive_handler_ && !unhandled_messages_.empty()) {
      Message message = std::move(unhandled_messages_.front());
      unhandled_messages_.pop_front();
      invoke_guarded("receive handler", receive_handler_, std::move(message));
    }
  });
}

void TcpTransport::Impl::install_error_handler(ErrorHandler handler) {
  asio::post(io_, [this, handler = std::move(handler)]() mutable {
    error_handler_ = std::move(handler);
    while (error_handler_ && !unhandled_errors_.empty()) {
      invoke_guarded("error handler", error_handler_, unhandled_errors_.front());
      unhandled_errors_.pop_front();
    }
  });
}

void TcpTransport::Impl::send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done,
                             uint64_t padding) {
  if (destination < 0 || destination >= config.world_size) {  // a caller bug, as in the in-process transport
    throw std::invalid_argument(
        fmt::format("rank {}: send to rank {}: no such rank in a world of {}", config.rank, destination,
                    config.world_size));
  }
  const uint64_t bytes = payload.size();
  SendCallback counted = [this, bytes, on_done = std::move(on_done)](std::exception_ptr error) {
    if (!error) {
      bytes_sent_ += bytes;
      ++messages_sent_;
    }
    if (on_done) invoke_guarded("send callback", on_done, error);
  };
  std::unique_lock lock(mutex_);
  if (closed_) {
    lock.unlock();
    counted(closed_error());
    return;
  }
  // Posting under the lock orders every accepted send before close()'s post.
  asio::post(io_, [this, destination, tag, payload = std::move(payload), counted = std::move(counted), padding]() mutable {
    do_send(destination, tag, std::move(payload), std::move(counted), padding);
  });
}

TransportStats TcpTransport::Impl::stats() const {
  TransportStats stats;
  stats.bytes_sent = bytes_sent_;
  stats.bytes_received = bytes_received_;
  stats.messages_sent = messages_sent_;
  stats.messages_received = messages_received_;
  return stats;
}

// --- data path (io thread) -------------------------------------------------------

void TcpTransport::Impl::do_send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done,
                                uint64_t padding) {
  auto refuse = [&](Rank peer, const std::string& why) {
    on_done(std::make_exception_ptr(TransportError(peer, fmt::format("rank {}: send to rank {} failed: {}",
                                                                     config.rank, destination, why))));
  };
  if (payload.size() > config.max_message_bytes) {
    return refuse(-1, fmt::format("{} bytes exceed max_message_bytes {}", payload.size(), config.max_message_bytes));
  }
  if (shutting_down_) return on_done(closed_error());
  if (destination == config.rank) {
    const uint64_t stood_for = stood_for_with(payload.size(), padding);
    deliver(Message{config.rank, tag, std::move(payload), stood_for});
    return on_done(nullptr);
  }
  PeerSlot& slot = peers_[destination];
  if (slot.error) {
    report_once(destination);  // a send to a departed peer makes its absence visible
    return on_done(slot.error);
  }
  if (!slot.connection) return refuse(destination, "not connected (connect() has not finished)");
  FrameHeader header;
  header.source = config.rank;
  header.tag = tag;
  header.payload_bytes = payload.size();
  for (uint64_t left = padding; left > 0;) {
    const uint64_t bytes = std::min(left, detail::kMaxPaddingFrameBytes);
    slot.connection->enqueue(detail::make_padding_frame(config.rank, bytes));
    left -= bytes;
  }
  slot.connection->enqueue(OutgoingFrame{encode_header(header), std::move(payload), std::move(on_done)});
}

void TcpTransport::Impl::on_frame(const Connection& connection, Frame&& frame) {
  switch (connection->state) {
    case ConnectionState::kHandshaking:
      return handle_hello(connection, std::move(frame));
    case ConnectionState::kEstablished:
      return handle_peer_frame(connection, std::move(frame));
    default:
      return;  // closing, departed or failed: nothing more is delivered
  }
}

void TcpTransport::Impl::handle_peer_frame(const Connection& connection, Frame&& frame) {
  if (frame.header.source != connection->peer) {
    throw FrameError("source", static_cast<uint32_t>(frame.header.source),
                     fmt::format("this connection belongs to rank {}", connection->peer));
  }
  switch (frame.header.type) {
    case FrameType::kData: {
      const uint64_t padding = std::exchange(connection->padding_received, 0);
      const uint64_t stood_for = stood_for_with(frame.payload.size(), padding);
      return deliver(Message{frame.header.source, frame.header.tag, std::move(frame.payload), stood_for});
    }
    case FrameType::kPadding:
      connection->padding_received += frame.header.payload_bytes;
      return;
    case FrameType::kHeartbeat:
      return;  // its arrival already refreshed last_received
    case FrameType::kGoodbye:
      return on_goodbye(connection);
    case FrameType::kHello:
      throw FrameError("type", static_cast<uint8_t>(FrameType::kHello), "hello after the handshake");
  }
}

void TcpTransport::Impl::deliver(Message&& message) {
  if (shutting_down_) return;
  bytes_received_ += message.payload.size();
  ++messages_received_;
  if (!receive_handler_) {
    unhandled_messages_.push_back(std::move(message));
    return;
  }
  invoke_guarded("receive handler", receive_handler_, std::move(message));
}

// --- failures ------------------------------------------------------------------------

void TcpTransport::Impl::on_goodbye(const Connection& connection) {
  const Rank peer = connection->peer;
  connection->state = ConnectionState::kDeparted;
  {
    std::lock_guard lock(mutex_);
    departed_[peer] = true;
  }
  PeerSlot& slot = peers_[peer];
  slot.error = std::make_exception_ptr(TransportError(
      peer, fmt::format("rank {}: rank {} ({}) has left: it closed its transport", config.rank, peer,
                        connection->remote_address())));
  const bool sends_were_pending = connection->has_pending_sends();
  connection->fail(slot.error);  // our FIN answers its goodbye
  if (sends_were_pending) report_once(peer);
}

std::exception_ptr TcpTransport::Impl::on_connection_lost(const Connection& connection, const std::string& reason) {
  switch (connection->state) {
    case ConnectionState::kHandshaking:
      return on_handshake_lost(connection, reason);
    case ConnectionState::kClosing:
      connection->state = ConnectionState::kClosed;  // the peer's EOF after our goodbye
      --goodbyes_pending_;
      finish_shutdown_if_done();
      return closed_error();
    case ConnectionState::kEstablished: {
      const Rank peer = connection->peer;
      connection->state = ConnectionState::kFailed;
      PeerSlot& slot = peers_[peer];
      slot.error = std::make_exception_ptr(TransportError(
          peer, fmt::format("rank {}: connection to rank {} ({}) lost: {}", config.rank, peer,
                            connection->remote_address(), reason)));
      report_once(peer);
      return slot.error;
    }
    default:  // already failed, departed or closed
      return connection->peer >= 0 && peers_[connection->peer].error ? peers_[connection->peer].error : closed_error();
  }
}

void TcpTransport::Impl::fail_peer(Rank peer, const std::string& reason) {
  PeerSlot& slot = peers_[peer];
  slot.connection->state = ConnectionState::kFailed;
  slot.error = std::make_exception_ptr(TransportError(peer, reason));
  report_once(peer);
  slot.connection->fail(slot.error);
}

void TcpTransport::Impl::report_once(Rank peer) {
  PeerSlot& slot = peers_[peer];
  if (slot.reported || !slot.error) return;
  slot.reported = true;
  try {
    std::rethrow_exception(slot.error);
  } catch (const TransportError& error) {
    report(error);
  }
}

void TcpTransport::Impl::report(const TransportError& error) {
  if (shutting_down_) return;
  if (!error_handler_) {
    unhandled_errors_.push_back(error);
    return;
  }
  invoke_guarded("error handler", error_handler_, error);
}

// --- TcpTransport ----------------------------------------------------------------------

TcpTransport::TcpTransport(TcpTransportConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
TcpTransport::~TcpTransport() = default;

uint16_t TcpTransport::listen_port() const { return impl_->listen_port(); }
void TcpTransport::connect(const std::vector<PeerAddress>& peers, std::chrono::milliseconds timeout) {
  impl_->connect(peers, timeout);
}
bool TcpTransport::peer_departed(Rank peer) const { return impl_->peer_departed(peer); }
Rank TcpTransport::rank() const { return impl_->config.rank; }
int TcpTransport::world_size() const { return impl_->config.world_size; }
void TcpTransport::on_receive(ReceiveHandler handler) { impl_->install_receive_handler(std::move(handler)); }
void TcpTransport::on_error(ErrorHandler handler) { impl_->install_error_handler(std::move(handler)); }
void TcpTransport::send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done) {
  impl_->send(destination, tag, std::move(payload), std::move(on_done));
}
void TcpTransport::send_standing_for(Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                                     SendCallback on_done) {
  if (wire_bytes < payload.size())
    throw std::invalid_argument(fmt::format("send_standing_for: a {}-byte payload cannot stand for {} bytes",
                                            payload.size(), wire_bytes));
  const uint64_t padding = wire_bytes - payload.size();  // before the payload is moved from
  impl_->send(destination, tag, std::move(payload), std::move(on_done), padding);
}
TransportStats TcpTransport::stats() const { return impl_->stats(); }
void TcpTransport::close() { impl_->close(); }

}  // namespace st::comm
