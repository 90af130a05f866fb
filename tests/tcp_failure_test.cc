// TCP transport failures: peers in forked child processes that are killed,
// exit or stall; raw sockets that send bad frames; a peer that breaks the
// frame format after its handshake.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>

#include <fmt/format.h>

#include "core/comm/frame.h"
#include "tests/tcp_test_util.h"

namespace st::comm::test {
namespace {

// --- peers that die, stall or misbehave ----------------------------------------------------

// Rank 1 of a two-rank world, in a child process. The fork happens first,
// while this process has no other thread; the child waits on a pipe for the
// store's port, joins, sends one message to rank 0, then sleeps (at most
// 30 s) or, with exit_on_message, _exit()s (no goodbye) on the first
// message it receives. The parent SIGKILLs it at the end in any case.
class ChildRank {
 public:
  explicit ChildRank(bool exit_on_message) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[1]);
      run(fds[0], exit_on_message);
    }
    close(fds[0]);
    pipe_ = fds[1];
  }
  ~ChildRank() {
    if (pipe_ >= 0) close(pipe_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  void start(uint16_t store_port) {
    if (write(pipe_, &store_port, sizeof store_port) != sizeof store_port) ADD_FAILURE() << "pipe write";
  }
  void signal(int number) { kill(pid_, number); }

 private:
  [[noreturn]] static void run(int pipe, bool exit_on_message) {
    int code = 0;
    try {
      uint16_t port = 0;
      if (read(pipe, &port, sizeof port) != sizeof port) _exit(10);
      auto transport = make_tcp_transport(test_options(1, 2, port));
      transport->on_receive([exit_on_message](Message&&) {
        if (exit_on_message) _exit(0);
      });
      transport->on_error([](const TransportError&) {});
      transport->send(0, 1, {1}, nullptr);
      for (int i = 0; i < 3000; ++i) std::this_thread::sleep_for(milliseconds(10));
    } catch (...) {
      code = 11;
    }
    _exit(code);
  }

  pid_t pid_ = -1;
  int pipe_ = -1;
};

std::unique_ptr<Transport> join_with_child(ChildRank& child, Inbox& inbox) {
  TcpOptions options = test_options(0, 2, 0);
  options.on_store_listening = [&](uint16_t port) { child.start(port); };
  auto transport = make_tcp_transport(options);
  inbox.attach(*transport);
  EXPECT_TRUE(wait_until([&] { return inbox.message_count() == 1; }, milliseconds(5000)));
  return transport;
}

void expect_reported(Inbox& inbox, Rank peer, const std::string& words, Clock::time_point since,
                     milliseconds within) {
  ASSERT_TRUE(wait_until([&] { return inbox.error_count() >= 1; }, within + milliseconds(3000)));
  const auto& [error, when] = inbox.errors[0];
  EXPECT_EQ(error.peer(), peer) << error.what();
  EXPECT_NE(std::string(error.what()).find(fmt::format("rank {} (127.0.0.1:", peer)), std::string::npos)
      << error.what();
  EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  EXPECT_LT(when - since, within) << error.what();
}


TEST(TcpFailure, KilledPeerIsReportedOnce) {
  ChildRank child(/*exit_on_message=*/false);
  Inbox inbox;
  auto transport = join_with_child(child, inbox);
  // Stopped first, so that this send is still pending when the peer dies.
  child.signal(SIGSTOP);
  std::promise<std::exception_ptr> pending;
  transport->send(1, 2, std::vector<uint8_t>(64 << 20), [&](std::exception_ptr e) { pending.set_value(e); });
  std::this_thread::sleep_for(milliseconds(100));
  const auto killed_at = Clock::now();
  child.signal(SIGKILL);
  expect_reported(inbox, 1, "lost", killed_at, milliseconds(1000 + 500));
  auto result = pending.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(1)), std::future_status::ready);
  EXPECT_THROW(std::rethrow_exception(result.get()), TransportError);
  expect_send_fails(*transport, 1);
  std::this_thread::sleep_for(milliseconds(1200));  // past peer_timeout: no second report
  EXPECT_EQ(inbox.error_count(), 1u);
}

TEST(TcpFailure, PeerThatExitsIsReported) {
  ChildRank child(/*exit_on_message=*/true);
  Inbox inbox;
  auto transport = join_with_child(child, inbox);
  const auto told_at = Clock::now();
  transport->send(1, 0, {}, nullptr);  // the child _exit()s on it
  expect_reported(inbox, 1, "lost", told_at, milliseconds(1000 + 500));
  expect_send_fails(*transport, 1);
}

TEST(TcpFailure, SilentPeerTimesOutAndPendingSendFails) {
  ChildRank child(/*exit_on_message=*/false);
  Inbox inbox;
  auto transport = join_with_child(child, inbox);
  const auto stopped_at = Clock::now();
  child.signal(SIGSTOP);  // alive, connected, silent
  std::promise<std::exception_ptr> pending;
  // More than both socket buffers hold: it cannot complete while rank 1 sleeps.
  transport->send(1, 2, std::vector<uint8_t>(64 << 20), [&](std::exception_ptr e) { pending.set_value(e); });
  expect_reported(inbox, 1, "silent", stopped_at, milliseconds(1000 + 1000));
  auto result = pending.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(2)), std::future_status::ready);
  EXPECT_THROW(std::rethrow_exception(result.get()), TransportError);
}

// A raw socket: connects, writes `bytes`, and expects the transport to drop
// it (EOF or reset) within two seconds.
void expect_dropped_after(uint16_t port, const std::vector<uint8_t>& bytes) {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), port});
  const timeval two_seconds{2, 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
  asio::write(socket, asio::buffer(bytes));
  std::error_code error;
  std::array<uint8_t, 4096> sink{};
  while (!error) socket.read_some(asio::buffer(sink), error);  // heartbeats, hello...
  EXPECT_TRUE(error == asio::error::eof || error == asio::error::connection_reset) << error.message();
}

std::vector<uint8_t> header_bytes(FrameType type, Rank source, uint64_t payload_bytes, std::vector<uint8_t> tail = {}) {
  const HeaderBytes header = encode_header(FrameHeader{type, source, 0, payload_bytes});
  std::vector<uint8_t> bytes(header.size() + tail.size());
  std::copy(header.begin(), header.end(), bytes.begin());
  std::copy(tail.begin(), tail.end(), bytes.begin() + header.size());
  return bytes;
}

TEST(TcpFailure, StrangersWithBadFramesAreDroppedAndTheTransportGoesOn) {
  Inbox inbox0, inbox1;
  auto transports = start_world(2);
  inbox0.attach(*transports[0]);
  inbox1.attach(*transports[1]);
  const uint16_t port = dynamic_cast<TcpTransport&>(*transports[0]).listen_port();
  expect_dropped_after(port, header_bytes(FrameType::kData, 1, uint64_t{1} << 40));  // 1 TiB
  std::vector<uint8_t> garbage(64, 'x');
  expect_dropped_after(port, garbage);
  expect_dropped_after(port, header_bytes(FrameType::kHello, 1, kHelloPayloadBytes, encode_hello({2, 0})));
  transports[1]->send(0, 3, {7}, nullptr);
  transports[0]->send(1, 4, {8}, nullptr);
  ASSERT_TRUE(wait_until([&] { return inbox0.message_count() == 1 && inbox1.message_count() == 1; },
                         milliseconds(2000)));
  EXPECT_EQ(inbox0.messages[0].payload, std::vector<uint8_t>{7});
  EXPECT_EQ(inbox0.error_count() + inbox1.error_count(), 0u);
}

TEST(TcpFailure, OversizedFrameFromAPeerDropsThatPeer) {
  TcpTransportConfig config;
  config.world_size = 2;
  config.session_id = 42;
  config.listen_host = "127.0.0.1";
  config.max_message_bytes = 1 << 20;
  config.heartbeat_interval = milliseconds(100);
  config.peer_timeout = milliseconds(1000);
  Inbox inbox;
  TcpTransport transport(config);
  inbox.attach(transport);
  std::thread rank0([&] { transport.connect({{"127.0.0.1", transport.listen_port()}, {}}, milliseconds(3000)); });
  // A hand-made rank 1: a correct hello, then a frame above the maximum.
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect({asio::ip::make_address("127.0.0.1"), transport.listen_port()});
  asio::write(socket, asio::buffer(header_bytes(FrameType::kHello, 1, kHelloPayloadBytes, encode_hello({2, 42}))));
  std::array<uint8_t, kFrameHeaderBytes + kHelloPayloadBytes> answer{};
  asio::read(socket, asio::buffer(answer));
  EXPECT_EQ(decode_header(answer.data(), {}).source, 0);
  rank0.join();
  const auto sent_at = Clock::now();
  asio::write(socket, asio::buffer(header_bytes(FrameType::kData, 1, 2 << 20)));
  expect_reported(inbox, 1, "payload_bytes", sent_at, milliseconds(1000));
  expect_send_fails(transport, 1);
}

}  // namespace
}  // namespace st::comm::test
