#pragma once
// One TCP connection of the TCP transport (internal: includes Asio, so only
// the transport's own .cc files include it).
//
// A connection reads frames continuously and writes queued frames in order.
// It runs entirely on the transport's io thread: no locks. Whatever goes
// wrong on the socket (EOF, reset, write error, malformed frame) is reported
// once to its owner, which answers with the error the pending sends get.
#include <asio.hpp>

#include <chrono>
#include <deque>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/frame.h"
#include "core/comm/transport.h"

namespace st::comm::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

struct OutgoingFrame {
  HeaderBytes header;
  std::vector<uint8_t> payload;
  SendCallback on_done;  // empty for control and padding frames
  uint64_t zero_bytes = 0;  // a padding frame's payload: zeros from one shared block, never allocated per frame
};

// A heartbeat, hello or goodbye frame from `source`.
OutgoingFrame make_control_frame(FrameType type, Rank source, std::vector<uint8_t> payload = {});

// A padding frame of `bytes` (1 to kMaxPaddingFrameBytes) from `source`.
inline constexpr uint64_t kMaxPaddingFrameBytes = uint64_t{16} << 20;
OutgoingFrame make_padding_frame(Rank source, uint64_t bytes);

class TcpConnection;

// The transport, as its connections see it. Called on the io thread.
class ConnectionOwner {
 public:
  // A complete frame. May throw FrameError for a protocol violation: the
  // connection is then dropped like for a malformed frame.
  virtual void on_frame(const std::shared_ptr<TcpConnection>& connection, Frame&& frame) = 0;
  // The socket failed or the peer sent garbage. Returns the error that the
  // connection's pending sends complete with.
  virtual std::exception_ptr on_connection_lost(const std::shared_ptr<TcpConnection>& connection,
                                                const std::string& reason) = 0;

 protected:
  ~ConnectionOwner() = default;
};

enum class ConnectionState {
  kHandshaking,  // waiting for the peer's hello
  kEstablished,  // exchanging frames with `peer`
  kDeparted,     // the peer said goodbye
  kFailed,       // lost, silent or misbehaving; reported
  kClosing,      // our goodbye is queued; waiting for the peer's EOF
  kClosed,
};

class TcpConnection : public std::enable_shared_from_this<TcpConnection> {
 public:
  TcpConnection(asio::ip::tcp::socket socket, FrameLimits limits, ConnectionOwner& owner);

  // Starts the read loop (call once, after construction).
  void start();

  // Queues a frame; frames are written in queue order.
  void enqueue(OutgoingFrame frame);

  // Completes queued sends not yet being written with `error`.
  void drop_queued(const std::exception_ptr& error);

  // Half-closes the socket (FIN) once every queued frame is written; reading
  // goes on until the peer's EOF.
  void shutdown_after_writes();

  // Closes the socket now: queued and in-flight sends complete with `error`.
  void fail(const std::exception_ptr& error);

  bool write_idle() const { return !writing_ && queue_.empty(); }
  bool has_pending_sends() const;  // data frames (ones with on_done) not yet completed
  const std::string& remote_address() const { return remote_address_; }
  // Bytes the peer has sent that the read loop has not taken in yet.
  std::size_t unread_bytes() const;

  // Bookkeeping the transport keeps here, for its own use.
  ConnectionState state = ConnectionState::kHandshaking;
  Rank peer = -1;           // known once the hello has been checked
  uint64_t padding_received = 0;  // padding since the last data frame: what that frame stood for beyond its payload
  Rank expected_peer = -1;  // outgoing connections: whom we dialled
  SteadyTime opened_at;
  SteadyTime handshake_deadline;  // dropped if still handshaking then
  SteadyTime last_received;  // any byte, not just whole frames
  SteadyTime last_written;

 private:
  void read_next();
  void on_read(const std::error_code& error, std::size_t bytes, bool into_payload);
  void write_next();
  void on_written(const std::error_code& error, std::size_t frames);
  void lose(const std::string& reason);
  void complete(std::deque<OutgoingFrame>& frames, const std::exception_ptr& error);
  void close_socket();

  asio::ip::tcp::socket socket_;
  ConnectionOwner& owner_;
  FrameDecoder decoder_;
  std::vector<uint8_t> read_buffer_;
  std::deque<OutgoingFrame> queue_;  // the first `in_flight_` are being written
  std::size_t in_flight_ = 0;
  bool writing_ = false;
  bool open_ = true;
  bool shutdown_requested_ = false;
  std::exception_ptr failure_;
  std::string remote_address_;
};

// "host:port" of a connected socket's peer, or "?" once it is gone.
std::string endpoint_string(const asio::ip::tcp::socket& socket);

}  // namespace st::comm::detail
