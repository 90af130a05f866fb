// TcpTransport: listening, dialling, the hello exchange and connect().
#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/comm/tcp_transport_impl.h"

namespace st::comm {
namespace {

using asio::ip::tcp;
using detail::ConnectionState;
using detail::SteadyTime;

// A refused dial (the peer's listener not there yet, or a transient error) is
// retried at this pace until the connect deadline.
constexpr std::chrono::milliseconds kDialRetry{50};

SteadyTime now() { return std::chrono::steady_clock::now(); }

std::string to_string(const tcp::endpoint& endpoint) {
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

tcp::endpoint resolve(asio::io_context& io, const std::string& host, uint16_t port) {
  std::error_code error;
  const asio::ip::address address = asio::ip::make_address(host, error);
  if (!error) return tcp::endpoint(address, port);
  tcp::resolver resolver(io);
  const auto results = resolver.resolve(host, std::to_string(port), error);
  if (error || results.empty()) {
    throw std::invalid_argument(fmt::format("cannot resolve host '{}': {}", host, error.message()));
  }
  return results.begin()->endpoint();
}

}  // namespace

std::string PeerAddress::to_string() const {
  return host.find(':') == std::string::npos ? fmt::format("{}:{}", host, port) : fmt::format("[{}]:{}", host, port);
}

PeerAddress parse_peer_address(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw std::invalid_argument(fmt::format("peer address '{}' is not host:port", text));
  }
  PeerAddress address;
  address.host = text.substr(0, colon);
  if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  const std::string port = text.substr(colon + 1);
  const bool digits = std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535) {
    throw std::invalid_argument(fmt::format("peer address '{}': port '{}' is not in 1..65535", text, port));
  }
  address.port = static_cast<uint16_t>(std::stoi(port));
  return address;
}

// --- listening --------------------------------------------------------------------

void TcpTransport::Impl::open_listener() {
  const auto fail = [&](const std::string& step, const std::error_code& error) {
    throw TransportError(-1, fmt::format("rank {}: cannot listen on {}:{} ({}): {}", config.rank, config.listen_host,
                                         config.listen_port, step, error.message()));
  };
  tcp::endpoint endpoint;
  try {
    endpoint = resolve(io_, config.listen_host, config.listen_port);
  } catch (const std::invalid_argument& error) {
    throw TransportError(-1, fmt::format("rank {}: listen_host: {}", config.rank, error.what()));
  }
  std::error_code error;
  if (acceptor_.open(endpoint.protocol(), error)) fail("open", error);
  acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (config.socket_buffer_bytes > 0) {
    // Set before listen(): accepted sockets inherit it, and the window scale
    // is agreed on during the handshake.
    acceptor_.set_option(asio::socket_base::receive_buffer_size(config.socket_buffer_bytes), error);
  }
  if (acceptor_.bind(endpoint, error)) fail("bind", error);
  if (acceptor_.listen(asio::socket_base::max_listen_connections, error)) fail("listen", error);
  listen_port_ = acceptor_.local_endpoint().port();
}

void TcpTransport::Impl::accept_next() {
  acceptor_.async_accept([this](const std::error_code& error, tcp::socket socket) {
    if (shutting_down_ || error == asio::error::operation_aborted) return;
    if (error) {
      spdlog::warn("tcp transport rank {}: accept failed: {}", config.rank, error.message());
    } else {
      configure_socket(socket);
      auto connection = make_connection(std::move(socket));
      connection->handshake_deadline = connection->opened_at + config.handshake_timeout;
      handshaking_.push_back(connection);
      connection->start();
    }
    accept_next();
  });
}

// --- dialling ---------------------------------------------------------------------

void TcpTransport::Impl::connect(const std::vector<PeerAddress>& peers, std::chrono::milliseconds timeout) {
  if (static_cast<int>(peers.size()) != config.world_size) {
    throw std::invalid_argument(
        fmt::format("connect: {} peer addresses for a world of {}", peers.size(), config.world_size));
  }
  const SteadyTime deadline = now() + timeout;
  std::vector<std::pair<Rank, tcp::endpoint>> targets;
  for (Rank peer = 0; peer < config.rank; ++peer) {
    try {
      targets.emplace_back(peer, resolve(io_, peers[peer].host, peers[peer].port));
    } catch (const std::invalid_argument& error) {
      throw TransportError(peer, fmt::format("rank {}: address of rank {}: {}", config.rank, peer, error.what()));
    }
  }
  asio::post(io_, [this, targets, deadline] {
    for (const auto& [peer, endpoint] : targets) dial(peer, endpoint, deadline);
  });

  std::unique_lock lock(mutex_);
  const auto all_connected = [&] { return std::all_of(connected_.begin(), connected_.end(), [](bool c) { return c; }); };
  const bool settled = connect_changed_.wait_until(lock, deadline, [&] {
    return connect_error_ || closed_ || all_connected();
  });
  if (connect_error_) std::rethrow_exception(connect_error_);
  if (closed_) throw TransportError(-1, fmt::format("rank {}: transport closed during connect()", config.rank));
  if (!settled) {
    const auto missing = std::find(connected_.begin(), connected_.end(), false) - connected_.begin();
    throw TransportError(static_cast<Rank>(missing), missing_peers_message(peers, timeout));
  }
}

std::string TcpTransport::Impl::missing_peers_message(const std::vector<PeerAddress>& peers,
                                                      std::chrono::milliseconds timeout) {
  std::string missing;
  for (Rank peer = 0; peer < config.world_size; ++peer) {
    if (connected_[peer]) continue;
    if (!missing.empty()) missing += "; ";
    if (peer < config.rank) {
      const std::string& attempt = dial_errors_[peer];
      missing += fmt::format("rank {} at {} ({})", peer, peers[peer].to_string(),
                             attempt.empty() ? "dialled, no hello answer" : attempt);
    } else {
      missing += fmt::format("rank {} (did not dial in)", peer);
    }
  }
  std::string message = fmt::format("rank {}: connect timed out after {} ms; missing: {}", config.rank,
                                    timeout.count(), missing);
  if (!last_rejection_.empty()) message += fmt::format("; last refused handshake: {}", last_rejection_);
  return message;
}

void TcpTransport::Impl::dial(Rank peer, tcp::endpoint endpoint, SteadyTime deadline) {
  if (shutting_down_) return;
  auto socket = std::make_shared<tcp::socket>(io_);
  std::error_code error;
  socket->open(endpoint.protocol(), error);
  if (!error) configure_socket(*socket);  // buffers before connect: window scaling
  dials_[peer].socket = socket;
  socket->async_connect(endpoint, [this, peer, endpoint, deadline, socket](const std::error_code& result) {
    on_dialled(peer, endpoint, deadline, result);
  });
}

void TcpTransport::Impl::on_dialled(Rank peer, tcp::endpoint endpoint, SteadyTime deadline,
                                    const std::error_code& error) {
  if (shutting_down_) return;
  Dial& dial_state = dials_[peer];
  if (error) {
    {
      std::lock_guard lock(mutex_);
      dial_errors_[peer] = fmt::format("connect to {} failed: {}", to_string(endpoint), error.message());
    }
    if (now() + kDialRetry >= deadline) return;  // connect() reports the timeout
    dial_state.retry_timer = std::make_shared<asio::steady_timer>(io_, kDialRetry);
    dial_state.retry_timer->async_wait([this, peer, endpoint, deadline](const std::error_code& cancelled) {
      if (!cancelled) dial(peer, endpoint, deadline);
    });
    return;
  }
  auto connection = make_connection(std::move(*dial_state.socket));
  connection->expected_peer = peer;
  connection->handshake_deadline = deadline;
  handshaking_.push_back(connection);
  send_hello(connection);
  connection->start();
}

// --- the hello exchange --------------------------------------------------------------

void TcpTransport::Impl::send_hello(const Connection& connection) {
  HelloInfo hello;
  hello.world_size = static_cast<uint32_t>(config.world_size);
  hello.session_id = config.session_id;
  connection->enqueue(detail::make_control_frame(FrameType::kHello, config.rank, encode_hello(hello)));
}

void TcpTransport::Impl::handle_hello(const Connection& connection, Frame&& frame) {
  if (frame.header.type != FrameType::kHello) {
    throw FrameError("type", static_cast<uint8_t>(frame.header.type), "expected a hello first");
  }
  const HelloInfo hello = decode_hello(frame.payload);
  if (hello.world_size != static_cast<uint32_t>(config.world_size)) {
    throw FrameError("hello.world_size", hello.world_size, fmt::format("this job has {} ranks", config.world_size));
  }
  if (hello.session_id != config.session_id) {
    throw FrameError("hello.session_id", hello.session_id,
                     fmt::format("this job's session is {} (a peer from another run?)", config.session_id));
  }
  const Rank source = frame.header.source;
  const auto source_value = static_cast<uint32_t>(source);
  if (connection->expected_peer >= 0) {
    if (source != connection->expected_peer) {
      throw FrameError("source", source_value, fmt::format("dialled rank {}", connection->expected_peer));
    }
  } else {
    if (source <= config.rank) {
      throw FrameError("source", source_value, fmt::format("rank {} accepts only higher ranks", config.rank));
    }
    if (peers_[source].connection) throw FrameError("source", source_value, "that rank is already connected");
    send_hello(connection);  // the answer; it precedes anything sent later
  }
  establish(connection, source);
}

void TcpTransport::Impl::establish(const Connection& connection, Rank peer) {
  drop_handshaking(connection);
  connection->state = ConnectionState::kEstablished;
  connection->peer = peer;
  connection->last_received = now();
  peers_[peer].connection = connection;
  std::lock_guard lock(mutex_);
  connected_[peer] = true;
  connect_changed_.notify_all();
}

void TcpTransport::Impl::drop_handshaking(const Connection& connection) {
  handshaking_.erase(std::remove(handshaking_.begin(), handshaking_.end(), connection), handshaking_.end());
}

void TcpTransport::Impl::check_handshake_deadline(const Connection& connection, SteadyTime time) {
  if (time <= connection->handshake_deadline) return;
  connection->fail(on_handshake_lost(connection, "no hello before the handshake deadline"));
}

std::exception_ptr TcpTransport::Impl::on_handshake_lost(const Connection& connection, const std::string& reason) {
  drop_handshaking(connection);
  connection->state = ConnectionState::kClosed;
  const Rank peer = connection->expected_peer;
  if (peer < 0) {
    spdlog::warn("tcp transport rank {}: refused connection from {}: {}", config.rank,
                 connection->remote_address(), reason);
    std::lock_guard lock(mutex_);
    last_rejection_ = fmt::format("{}: {}", connection->remote_address(), reason);
    return std::make_exception_ptr(TransportError(-1, reason));
  }
  // A dialled peer that answers wrongly is misconfigured: fail connect() now.
  auto error = std::make_exception_ptr(TransportError(
      peer, fmt::format("rank {}: handshake with rank {} at {} failed: {}", config.rank, peer,
                        connection->remote_address(), reason)));
  std::lock_guard lock(mutex_);
  if (!connect_error_) connect_error_ = error;
  connect_changed_.notify_all();
  return error;
}

}  // namespace st::comm
