#pragma once
// TcpTransport's state (internal). Split over three files:
//   tcp_transport.cc  public API, data path, failures
//   tcp_lifecycle.cc  heartbeats, peer timeouts, close()
//   tcp_handshake.cc  listening, dialling, hello checks, connect()
//
// Everything below "io thread only" is touched by the io thread alone; the
// block under `mutex_` is what other threads read (connect(), close(),
// peer_departed()). Stats are atomics.
#include <asio.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/comm/tcp_connection.h"
#include "core/comm/tcp_transport.h"

namespace st::comm {

class TcpTransport::Impl final : public detail::ConnectionOwner {
 public:
  explicit Impl(TcpTransportConfig config);
  ~Impl();

  uint16_t listen_port() const { return listen_port_; }
  void connect(const std::vector<PeerAddress>& peers, std::chrono::milliseconds timeout);
  bool peer_departed(Rank peer) const;
  void install_receive_handler(ReceiveHandler handler);
  void install_error_handler(ErrorHandler handler);
  // `padding`: bytes sent before the payload's frame (send_standing_for).
  void send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done, uint64_t padding = 0);
  TransportStats stats() const;
  void close();

  void on_frame(const std::shared_ptr<detail::TcpConnection>& connection, Frame&& frame) override;
  std::exception_ptr on_connection_lost(const std::shared_ptr<detail::TcpConnection>& connection,
                                        const std::string& reason) override;

  const TcpTransportConfig config;

 private:
  using Connection = std::shared_ptr<detail::TcpConnection>;

  struct PeerSlot {
    Connection connection;   // set once the handshake succeeded
    std::exception_ptr error;  // set once failed or departed
    bool reported = false;
  };

  // Outgoing connection attempts of connect(), kept to cancel them on close.
  struct Dial {
    std::shared_ptr<asio::ip::tcp::socket> socket;
    std::shared_ptr<asio::steady_timer> retry_timer;
  };

  // tcp_transport.cc
  void run_io();
  void configure_socket(asio::ip::tcp::socket& socket) const;
  Connection make_connection(asio::ip::tcp::socket socket);
  void do_send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done, uint64_t padding);
  void handle_peer_frame(const Connection& connection, Frame&& frame);
  void on_goodbye(const Connection& connection);
  void deliver(Message&& message);
  void fail_peer(Rank peer, const std::string& reason);
  void report_once(Rank peer);
  void report(const TransportError& error);

  // tcp_lifecycle.cc
  void schedule_tick();
  void on_tick();
  void check_established(const Connection& connection, detail::SteadyTime now);
  void begin_shutdown();
  void force_close_all();
  void finish_shutdown_if_done();
  std::exception_ptr closed_error() const;

  // tcp_handshake.cc
  void open_listener();
  void accept_next();
  void dial(Rank peer, asio::ip::tcp::endpoint endpoint, detail::SteadyTime deadline);
  void on_dialled(Rank peer, asio::ip::tcp::endpoint endpoint, detail::SteadyTime deadline, const std::error_code& error);
  void handle_hello(const Connection& connection, Frame&& frame);
  void establish(const Connection& connection, Rank peer);
  void drop_handshaking(const Connection& connection);
  void check_handshake_deadline(const Connection& connection, detail::SteadyTime now);
  std::exception_ptr on_handshake_lost(const Connection& connection, const std::string& reason);
  std::string missing_peers_message(const std::vector<PeerAddress>& peers, std::chrono::milliseconds timeout);
  void send_hello(const Connection& connection);

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer tick_timer_;
  asio::steady_timer close_timer_;
  uint16_t listen_port_ = 0;
  std::thread io_thread_;
  std::thread::id io_thread_id_;  // fixed once started; read by close()
  std::mutex join_mutex_;

  // io thread only
  std::vector<PeerSlot> peers_;
  std::vector<Connection> handshaking_;
  std::vector<Dial> dials_;
  ReceiveHandler receive_handler_;
  std::deque<Message> unhandled_messages_;  // arrived before a handler was installed
  ErrorHandler error_handler_;
  std::deque<TransportError> unhandled_errors_;
  bool shutting_down_ = false;
  std::size_t goodbyes_pending_ = 0;

  // shared with other threads
  mutable std::mutex mutex_;
  std::condition_variable connect_changed_;
  std::vector<bool> connected_;
  std::vector<bool> departed_;
  std::vector<std::string> dial_errors_;  // last failure per dialled peer
  std::string last_rejection_;            // last refused incoming handshake
  std::exception_ptr connect_error_;
  bool closed_ = false;

  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<uint64_t> bytes_received_{0};
  std::atomic<uint64_t> messages_sent_{0};
  std::atomic<uint64_t> messages_received_{0};
};

}  // namespace st::comm
