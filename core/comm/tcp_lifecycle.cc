// TcpTransport: heartbeats, peer timeouts and the orderly shutdown.
#include <algorithm>

#include <fmt/format.h>

#include "core/comm/tcp_transport_impl.h"

namespace st::comm {
namespace {

using detail::ConnectionState;
using detail::SteadyTime;
using std::chrono::milliseconds;

SteadyTime now() { return std::chrono::steady_clock::now(); }

long long as_ms(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration_cast<milliseconds>(duration).count();
}

}  // namespace

// --- heartbeats and timeouts ----------------------------------------------------------

void TcpTransport::Impl::schedule_tick() {
  // Often enough that a heartbeat is at most half an interval late and a
  // timeout is noticed within a quarter of peer_timeout.
  const auto period = std::max(milliseconds(5), std::min({config.heartbeat_interval / 2, config.peer_timeout / 4,
                                                          config.handshake_timeout / 4}));
  tick_timer_.expires_after(period);
  tick_timer_.async_wait([this](const std::error_code& error) {
    if (!error && !shutting_down_) on_tick();
  });
}

void TcpTransport::Impl::on_tick() {
  const SteadyTime time = now();
  for (auto& slot : peers_) {
    if (slot.connection && slot.connection->state == ConnectionState::kEstablished) {
      check_established(slot.connection, time);
    }
  }
  const std::vector<Connection> handshaking = handshaking_;
  for (const auto& connection : handshaking) check_handshake_deadline(connection, time);
  schedule_tick();
}

void TcpTransport::Impl::check_established(const Connection& connection, SteadyTime time) {
  const auto silence = time - connection->last_received;
  if (silence > config.peer_timeout) {
    // last_received moves when a read completes on this thread. Bytes still
    // waiting in the socket mean the peer did speak and this io thread is
    // what fell behind (a long handler, a CPU-starved process): our delay,
    // not the peer's silence, so it must not fail a live peer.
    if (connection->unread_bytes() == 0) {
      return fail_peer(connection->peer,
                       fmt::format("rank {}: rank {} ({}) silent for {} ms (peer_timeout {} ms)", config.rank,
                                   connection->peer, connection->remote_address(), as_ms(silence),
                                   config.peer_timeout.count()));
    }
    connection->last_received = time;
  }
  if (connection->write_idle() && time - connection->last_written >= config.heartbeat_interval) {
    connection->enqueue(detail::make_control_frame(FrameType::kHeartbeat, config.rank));
  }
}

// --- shutdown ------------------------------------------------------------------------

std::exception_ptr TcpTransport::Impl::closed_error() const {
  return std::make_exception_ptr(TransportError(-1, fmt::format("rank {}: transport closed", config.rank)));
}

void TcpTransport::Impl::close() {
  {
    std::lock_guard lock(mutex_);
    if (!closed_) {
      closed_ = true;
      asio::post(io_, [this] { begin_shutdown(); });
      connect_changed_.notify_all();  // a connect() in progress gives up
    }
  }
  if (std::this_thread::get_id() == io_thread_id_) return;  // from a handler: the destructor joins
  std::lock_guard join_lock(join_mutex_);
  if (io_thread_.joinable()) io_thread_.join();
}

void TcpTransport::Impl::begin_shutdown() {
  shutting_down_ = true;
  std::error_code ignored;
  acceptor_.close(ignored);
  tick_timer_.cancel();
  for (auto& dial : dials_) {
    if (dial.socket) dial.socket->close(ignored);
    if (dial.retry_timer) dial.retry_timer->cancel();
  }
  const std::exception_ptr closed = closed_error();
  for (const auto& connection : std::vector<Connection>(handshaking_)) connection->fail(closed);
  handshaking_.clear();
  for (auto& slot : peers_) {
    if (!slot.connection || slot.connection->state != ConnectionState::kEstablished) continue;
    slot.connection->state = ConnectionState::kClosing;
    slot.connection->drop_queued(closed);
    slot.connection->enqueue(detail::make_control_frame(FrameType::kGoodbye, config.rank));
    slot.connection->shutdown_after_writes();
    ++goodbyes_pending_;
  }
  unhandled_messages_.clear();
  unhandled_errors_.clear();
  close_timer_.expires_after(config.close_timeout);
  close_timer_.async_wait([this](const std::error_code& error) {
    if (!error) force_close_all();
  });
  finish_shutdown_if_done();
}

void TcpTransport::Impl::force_close_all() {
  const std::exception_ptr closed = closed_error();
  for (auto& slot : peers_) {
    if (slot.connection && slot.connection->state == ConnectionState::kClosing) {
      slot.connection->state = ConnectionState::kClosed;
      slot.connection->fail(closed);
    }
  }
  goodbyes_pending_ = 0;
  finish_shutdown_if_done();
}

void TcpTransport::Impl::finish_shutdown_if_done() {
  if (goodbyes_pending_ > 0) return;
  close_timer_.cancel();
  work_.reset();  // io_.run() returns once the aborted operations have drained
}

}  // namespace st::comm
