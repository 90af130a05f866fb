#pragma once
// Helpers for the emulation backend's tests: skipping without privileges,
// a bulk TCP flow, a trace-paced UDP flow and a UDP one-way delay probe run
// on threads inside the emulator's node namespaces (a thread may enter a
// network namespace on its own; its sockets stay there). Everything runs
// in namespaces the test builds itself (prefix st-), which the EmuNetwork
// removes.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "emu/emu_network.h"
#include "emu/emu_plan.h"
#include "emu/host_check.h"
#include "emu/netns.h"
#include "emu/process.h"
#include "traces/trace.h"

#define ST_SKIP_WITHOUT_EMU_PRIVILEGES()                                                                       \
  do {                                                                                                         \
    if (!st::emu::has_privileges())                                                                            \
      GTEST_SKIP() << "needs CAP_NET_ADMIN and CAP_SYS_ADMIN (run as root): it builds network namespaces"; \
  } while (0)

namespace st::emu::testing {

// The host's CPU use since `start`, printed, and the share the hypervisor
// stole (0 when /proc/stat was unreadable): the emulator's timing is real,
// so a measurement that falls short while the hypervisor stole the CPU (a
// shared CI machine) says so in the test's output.
inline double print_host_cpu_since(const CpuTimes& start) {
  const nlohmann::json use = cpu_use_between(start, cpu_times());
  if (use.is_null()) return 0;
  std::printf("host CPU over the measurement: busy %.2f, stolen by the hypervisor %.3f\n", use["busy"].get<double>(),
              use["steal"].get<double>());
  return use["steal"].get<double>();
}

// Over this stolen share a shaping measurement measures the host, not the
// emulator (docs/emu.md: 10-35% stolen made emulated iterations up to 1.8x
// longer; the same share host_fell_behind reports).
constexpr double kStolenShareThatVoidsATiming = 0.05;

// One test's network: a run id of its own, registered as kind "test",
// removed when the object goes. network->plan() is what was built.
inline std::unique_ptr<EmuNetwork> make_test_network(const net::TopologyConfig& config) {
  EmuNetworkOptions options;
  options.kind = "test";
  return std::make_unique<EmuNetwork>(plan_emulation(config, make_run_id()), options);
}

inline double monotonic_s() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec / 1e9;
}

inline sockaddr_in address_of(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  return a;
}

// A UDP socket opened inside `netns` (it stays there).
inline int udp_socket_in(const std::string& netns) {
  NetnsScope inside(netns);
  return socket(AF_INET, SOCK_DGRAM, 0);
}

// A UDP socket inside `netns` bound to `port` on every address there, its
// receives timing out after `timeout`; throws "<what> bind: ..." when the
// port cannot be had.
inline int bound_udp_receiver(const std::string& netns, uint16_t port, timeval timeout, const std::string& what) {
  const int receiver = udp_socket_in(netns);
  const sockaddr_in any = address_of("0.0.0.0", port);
  if (bind(receiver, reinterpret_cast<const sockaddr*>(&any), sizeof(any)) != 0) {
    const std::string error = std::strerror(errno);
    close(receiver);
    throw std::runtime_error(what + " bind: " + error);
  }
  setsockopt(receiver, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return receiver;
}

// One TCP connection from `client_netns` to `server_netns`:`address`:`port`
// whose receiving end reads all the time, on a thread of its own, and
// counts the stream bytes. The sending socket is the owner's to write to;
// it uses the client namespace's congestion control.
class CountedConnection {
 public:
  CountedConnection(const std::string& server_netns, const std::string& address, const std::string& client_netns,
                    uint16_t port) {
    {
      NetnsScope inside(server_netns);
      listener_ = socket(AF_INET, SOCK_STREAM, 0);
    }
    const int one = 1;
    setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    const sockaddr_in any = address_of("0.0.0.0", port);
    if (bind(listener_, reinterpret_cast<const sockaddr*>(&any), sizeof(any)) != 0 || listen(listener_, 1) != 0) {
      const std::string error = std::strerror(errno);
      close(listener_);
      throw std::runtime_error("test connection listen: " + error);
    }
    receiver_ = std::thread([this] { receive(); });
    {
      NetnsScope inside(client_netns);
      sender_ = socket(AF_INET, SOCK_STREAM, 0);
    }
    const sockaddr_in to = address_of(address, port);
    if (connect(sender_, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) {
      const std::string error = std::strerror(errno);
      close_down();  // the receiver thread ends before the error leaves
      throw std::runtime_error("test connection connect: " + error);
    }
  }
  ~CountedConnection() { close_down(); }
  CountedConnection(const CountedConnection&) = delete;
  CountedConnection& operator=(const CountedConnection&) = delete;

  int sender() const { return sender_; }
  uint64_t received_bytes() const { return received_; }
  // Ends the sending side: a send() blocked on it returns.
  void shut_sender() { shutdown(sender_, SHUT_RDWR); }
  // Ends both sides and waits for the receiver thread.
  void close_down() {
    if (closed_.exchange(true)) return;
    shutdown(sender_, SHUT_RDWR);
    shutdown(listener_, SHUT_RDWR);
    if (receiver_.joinable()) receiver_.join();
    close(sender_);
    close(listener_);
  }
  // The sender's retransmission timeout now (TCP_INFO's tcpi_rto), in ms.
  double sender_rto_ms() const {
    tcp_info info{};
    socklen_t size = sizeof(info);
    if (getsockopt(sender_, IPPROTO_TCP, TCP_INFO, &info, &size) != 0)
      throw std::runtime_error(std::string("test connection TCP_INFO: ") + std::strerror(errno));
    return info.tcpi_rto / 1000.0;
  }

 private:
  void receive() {
    const int connection = accept(listener_, nullptr, nullptr);
    if (connection < 0) return;
    std::vector<char> block(1 << 16);
    for (;;) {
      const ssize_t n = recv(connection, block.data(), block.size(), 0);
      if (n <= 0) break;
      received_ += static_cast<uint64_t>(n);
    }
    close(connection);
  }

  int listener_ = -1, sender_ = -1;
  std::thread receiver_;
  std::atomic<uint64_t> received_{0};
  std::atomic<bool> closed_{false};
};

// One TCP connection from `client_netns` to `server_netns`:`address`,
// sending as fast as the network takes it until stop(). The receiver
// counts stream bytes; the sender's socket uses the namespace's
// congestion control.
class BulkFlow {
 public:
  BulkFlow(const std::string& server_netns, const std::string& address, const std::string& client_netns, uint16_t port)
      : connection_(server_netns, address, client_netns, port) {
    sender_ = std::thread([this] { send_forever(); });
  }
  ~BulkFlow() { stop(); }

  void stop() {
    if (stopped_.exchange(true)) return;
    connection_.shut_sender();
    if (sender_.joinable()) sender_.join();
    connection_.close_down();
  }
  uint64_t received_bytes() const { return connection_.received_bytes(); }
  double sender_rto_ms() const { return connection_.sender_rto_ms(); }

 private:
  void send_forever() {
    std::vector<char> block(1 << 16, 'x');
    while (!stopped_) {
      if (send(connection_.sender(), block.data(), block.size(), MSG_NOSIGNAL) <= 0) break;
    }
  }

  CountedConnection connection_;
  std::thread sender_;
  std::atomic<bool> stopped_{false};
};

// UDP datagrams from `client_netns` to `server_netns`:`address`:`port` at
// `factor` times `trace`'s rate (its time 0 is construction), paced in
// 1 ms ticks, until stop(); a socket in the server namespace drains them.
// Unlike TCP it never backs off, so the bottleneck queue stays full and
// what the link delivers is the shaper's rate alone (TCP after an outage
// regains its rate over seconds: the congestion control, not the shaper).
class PacedUdpFlow {
 public:
  PacedUdpFlow(const std::string& server_netns, const std::string& address, const std::string& client_netns,
               uint16_t port, traces::Trace trace, double factor)
      : trace_(std::move(trace)),
        factor_(factor),
        to_(address_of(address, port)),
        // The timeout lets the drain thread see stop().
        receiver_(bound_udp_receiver(server_netns, port, timeval{0, 100'000}, "paced UDP flow")),
        sender_(udp_socket_in(client_netns)) {
    drain_ = std::thread([this] { drain(); });
    pace_ = std::thread([this] { send_paced(); });
  }
  ~PacedUdpFlow() { stop(); }
  PacedUdpFlow(const PacedUdpFlow&) = delete;
  PacedUdpFlow& operator=(const PacedUdpFlow&) = delete;

  void stop() {
    if (stopped_.exchange(true)) return;
    if (pace_.joinable()) pace_.join();
    if (drain_.joinable()) drain_.join();
    close(sender_);
    close(receiver_);
  }

 private:
  static constexpr std::size_t kPayloadBytes = 1400;  // 1428 on the wire: one packet under a 1500 MTU

  void send_paced() {
    const std::vector<char> payload(kPayloadBytes, 'u');
    const double start = monotonic_s();
    double owed_bytes = 0, last = start;
    while (!stopped_) {
      const double now = monotonic_s();
      owed_bytes += factor_ * trace_.rate_at(now - start) * 1e6 / 8 * (now - last);
      last = now;
      for (; owed_bytes >= kPayloadBytes; owed_bytes -= kPayloadBytes)
        sendto(sender_, payload.data(), payload.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to_),
               sizeof(to_));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void drain() {
    std::vector<char> block(1 << 16);
    while (!stopped_) recv(receiver_, block.data(), block.size(), 0);
  }

  traces::Trace trace_;
  double factor_;
  sockaddr_in to_;
  int receiver_ = -1, sender_ = -1;
  std::thread pace_, drain_;
  std::atomic<bool> stopped_{false};
};

// Two nodes exchanging `bytes` each way per iteration, as a training loop
// does: each node sends its bytes to the other over its own persistent
// connection, waits until the peer's have all arrived, sleeps `gap_s` (its
// compute) and goes again, until stop(). Receivers read all the time (as
// the engine's transports do), so neither side's send blocks on the other.
class ExchangeLoop {
 public:
  struct Node {
    std::string netns, address;
  };
  ExchangeLoop(const Node& a, const Node& b, uint16_t port, std::size_t bytes, double gap_s)
      : bytes_(bytes),
        gap_s_(gap_s),
        into_{{a.netns, a.address, b.netns, port}, {b.netns, b.address, a.netns, static_cast<uint16_t>(port + 1)}} {
    for (int node = 0; node < 2; ++node) loops_[node] = std::thread([this, node] { run(node); });
  }
  ~ExchangeLoop() { stop(); }

  void stop() {
    if (stopped_.exchange(true)) return;
    for (auto& connection : into_) connection.shut_sender();
    for (auto& loop : loops_)
      if (loop.joinable()) loop.join();
    for (auto& connection : into_) connection.close_down();
  }
  // Iterations both nodes have finished, and the bytes received both ways.
  int iterations() const { return std::min(iterations_[0].load(), iterations_[1].load()); }
  uint64_t received_bytes() const { return into_[0].received_bytes() + into_[1].received_bytes(); }

 private:
  void run(int node) {
    const int out = into_[1 - node].sender();
    std::vector<char> block(bytes_, 'x');
    while (!stopped_) {
      for (std::size_t sent = 0; sent < bytes_ && !stopped_;) {
        const ssize_t n = send(out, block.data() + sent, bytes_ - sent, MSG_NOSIGNAL);
        if (n <= 0) return;
        sent += static_cast<std::size_t>(n);
      }
      const uint64_t wanted = static_cast<uint64_t>(iterations_[node] + 1) * bytes_;
      while (into_[node].received_bytes() < wanted && !stopped_)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::this_thread::sleep_for(std::chrono::duration<double>(gap_s_));
      if (!stopped_) iterations_[node] += 1;
    }
  }

  std::size_t bytes_;
  double gap_s_;
  CountedConnection into_[2];  // into_[n]: the connection into node n, from the other
  std::thread loops_[2];
  std::atomic<int> iterations_[2] = {0, 0};
  std::atomic<bool> stopped_{false};
};

// One-way delays of `count` UDP datagrams from `from_netns` to
// `to_netns`:`address` (both ends read the same monotonic clock), sent
// `interval_s` apart. Returns them in seconds, in arrival order.
inline std::vector<double> one_way_delays(const std::string& from_netns, const std::string& to_netns,
                                          const std::string& address, uint16_t port, int count, double interval_s) {
  const int receiver = bound_udp_receiver(to_netns, port, timeval{2, 0}, "probe");
  const int sender = udp_socket_in(from_netns);
  std::vector<double> delays;
  std::thread listen_thread([&] {
    for (int i = 0; i < count; ++i) {
      double sent = 0;
      if (recv(receiver, &sent, sizeof(sent), 0) != static_cast<ssize_t>(sizeof(sent))) break;
      delays.push_back(monotonic_s() - sent);
    }
  });
  const sockaddr_in to = address_of(address, port);
  for (int i = 0; i < count; ++i) {
    const double now = monotonic_s();
    sendto(sender, &now, sizeof(now), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
    std::this_thread::sleep_for(std::chrono::duration<double>(interval_s));
  }
  listen_thread.join();
  close(sender);
  close(receiver);
  return delays;
}

// A namespace's TCP counters from /proc/net/netstat's TcpExt lines (each
// network namespace keeps its own): name to value.
inline std::map<std::string, long long> tcp_ext_counters(const std::string& netns) {
  std::string text;
  if (run_in_netns(netns, {"cat", "/proc/net/netstat"}, text) != 0)
    throw std::runtime_error("cannot read /proc/net/netstat in " + netns + ": " + text);
  std::istringstream lines(text);
  std::string names, values;
  std::map<std::string, long long> counters;
  while (std::getline(lines, names) && std::getline(lines, values)) {
    if (names.rfind("TcpExt:", 0) != 0) continue;
    std::istringstream name(names), value(values);
    std::string n, v;
    name >> n;
    value >> v;  // the "TcpExt:" headers
    while (name >> n && value >> v) counters[n] = std::stoll(v);
  }
  return counters;
}

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace st::emu::testing
