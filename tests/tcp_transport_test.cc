// TCP transport on 127.0.0.1: several ranks per test process (each its own
// transport; rank 0 hosts the TCPStore on an OS-chosen port), peers in forked
// child processes that die or stall, raw sockets sending bad frames, and a
// loopback throughput measurement (printed; see docs/transport.md).
#include <gtest/gtest.h>

#include <asio.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/comm/frame.h"
#include "core/comm/rendezvous.h"
#include "core/comm/tcp_transport.h"

namespace st::comm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TcpOptions test_options(Rank rank, int world_size, uint16_t store_port) {
  TcpOptions options;
  options.rank = rank;
  options.world_size = world_size;
  options.master_port = store_port;
  options.listen_host = "127.0.0.1";
  options.connect_timeout = milliseconds(10000);
  options.heartbeat_interval = milliseconds(100);
  options.peer_timeout = milliseconds(1000);
  options.close_timeout = milliseconds(1000);
  return options;
}

// Starts rank 0 (which hosts the store on a free port), then ranks 1 ..
// started - 1 of a world of world_size.
std::vector<std::unique_ptr<Transport>> start_world(int world_size, TcpOptions base = test_options(0, 1, 0),
                                                    int started = -1) {
  if (started < 0) started = world_size;
  std::vector<std::unique_ptr<Transport>> transports(world_size);
  std::vector<std::exception_ptr> errors(world_size);
  std::promise<uint16_t> store_port;
  auto start_rank = [&](Rank rank, uint16_t port) {
    TcpOptions options = base;
    options.rank = rank;
    options.world_size = world_size;
    options.master_port = port;
    if (rank == 0 && world_size > 1) options.on_store_listening = [&](uint16_t chosen) { store_port.set_value(chosen); };
    if (world_size == 1) store_port.set_value(0);
    try {
      transports[rank] = make_tcp_transport(options);
    } catch (...) {
      errors[rank] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(start_rank, 0, 0);
  auto port_future = store_port.get_future();
  const bool hosted = port_future.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
  const uint16_t port = hosted ? port_future.get() : 1;
  for (Rank rank = 1; rank < started; ++rank) threads.emplace_back(start_rank, rank, port);
  for (auto& thread : threads) thread.join();
  for (auto& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return transports;
}

bool wait_until(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

// Collects what one rank receives and the errors it is told about.
struct Inbox {
  std::mutex mutex;
  std::vector<Message> messages;
  std::vector<std::pair<TransportError, Clock::time_point>> errors;

  void attach(Transport& transport) {
    transport.on_receive([this](Message&& message) {
      std::lock_guard lock(mutex);
      messages.push_back(std::move(message));
    });
    transport.on_error([this](const TransportError& error) {
      std::lock_guard lock(mutex);
      errors.emplace_back(error, Clock::now());
    });
  }
  std::size_t message_count() {
    std::lock_guard lock(mutex);
    return messages.size();
  }
  std::size_t error_count() {
    std::lock_guard lock(mutex);
    return errors.size();
  }
};

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

std::vector<uint8_t> make_payload(std::size_t size, uint64_t seed) {
  std::vector<uint8_t> payload(size);
  for (std::size_t i = 0; i < size; i += 8) {
    const uint64_t word = mix(seed + i);
    std::memcpy(payload.data() + i, &word, std::min<std::size_t>(8, size - i));
  }
  return payload;
}

uint64_t seed_of(Rank source, Rank destination, uint32_t sequence) {
  return (uint64_t(source) << 48) ^ (uint64_t(destination) << 32) ^ sequence;
}

// Every rank sends every size to every rank (itself included), in order.
void exchange_all_to_all(int world_size) {
  const std::vector<std::size_t> sizes = {0, 1, 64 * 1024, 32 * 1024 * 1024, 1, 0};
  auto transports = start_world(world_size);
  std::vector<Inbox> inboxes(world_size);
  for (Rank r = 0; r < world_size; ++r) inboxes[r].attach(*transports[r]);
  std::atomic<int> completed{0};
  std::atomic<int> failed{0};
  for (Rank source = 0; source < world_size; ++source) {
    for (uint32_t sequence = 0; sequence < sizes.size(); ++sequence) {
      for (Rank destination = 0; destination < world_size; ++destination) {
        transports[source]->send(destination, 1000 + sequence,
                                 make_payload(sizes[sequence], seed_of(source, destination, sequence)),
                                 [&](std::exception_ptr error) {
                                   ++completed;
                                   if (error) ++failed;
                                 });
      }
    }
  }
  const int total = world_size * world_size * static_cast<int>(sizes.size());
  ASSERT_TRUE(wait_until([&] { return completed == total; }, milliseconds(20000)));
  EXPECT_EQ(failed, 0);
  std::size_t bytes_per_peer = 0;
  for (auto size : sizes) bytes_per_peer += size;
  for (Rank destination = 0; destination < world_size; ++destination) {
    Inbox& inbox = inboxes[destination];
    ASSERT_TRUE(wait_until([&] { return inbox.message_count() == world_size * sizes.size(); }, milliseconds(20000)));
    std::map<Rank, uint32_t> next_sequence;
    for (const Message& message : inbox.messages) {
      const uint32_t sequence = next_sequence[message.source]++;
      ASSERT_EQ(message.tag, 1000 + sequence) << "order from rank " << message.source;
      ASSERT_EQ(message.payload, make_payload(sizes[sequence], seed_of(message.source, destination, sequence)));
    }
    const TransportStats stats = transports[destination]->stats();
    EXPECT_EQ(stats.messages_sent, world_size * sizes.size());
    EXPECT_EQ(stats.messages_received, world_size * sizes.size());
    EXPECT_EQ(stats.bytes_sent, world_size * bytes_per_peer);
    EXPECT_EQ(stats.bytes_received, world_size * bytes_per_peer);
    EXPECT_EQ(inbox.error_count(), 0u);
  }
}

TEST(TcpTransport, TwoRanksExchangeAllSizes) { exchange_all_to_all(2); }
TEST(TcpTransport, FourRanksAllToAll) { exchange_all_to_all(4); }

TEST(TcpTransport, SingleRankSendsToItself) {
  auto transports = start_world(1);
  Inbox inbox;
  inbox.attach(*transports[0]);
  transports[0]->send(0, 9, {1, 2, 3}, nullptr);
  ASSERT_TRUE(wait_until([&] { return inbox.message_count() == 1; }, milliseconds(2000)));
  EXPECT_EQ(inbox.messages[0].payload, (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(inbox.messages[0].source, 0);
}

TEST(TcpTransport, MessagesBeforeTheHandlerAreKept) {
  auto transports = start_world(2);
  transports[1]->send(0, 5, {42}, nullptr);
  std::this_thread::sleep_for(milliseconds(100));
  Inbox inbox;
  inbox.attach(*transports[0]);
  ASSERT_TRUE(wait_until([&] { return inbox.message_count() == 1; }, milliseconds(2000)));
  EXPECT_EQ(inbox.messages[0].tag, 5u);
}

TEST(TcpTransport, BadSendsCompleteWithErrors) {
  TcpOptions base = test_options(0, 1, 0);
  base.max_message_bytes = 1000;
  auto transports = start_world(2, base);
  std::promise<std::exception_ptr> bad_rank, too_big;
  transports[0]->send(7, 0, {}, [&](std::exception_ptr error) { bad_rank.set_value(error); });
  transports[0]->send(1, 0, std::vector<uint8_t>(1001), [&](std::exception_ptr error) { too_big.set_value(error); });
  EXPECT_THROW(std::rethrow_exception(bad_rank.get_future().get()), TransportError);
  EXPECT_THROW(std::rethrow_exception(too_big.get_future().get()), TransportError);
}

// --- clean close ------------------------------------------------------------------------

TEST(TcpTransport, CleanCloseIsNotAFailureButLaterSendsSeeIt) {
  auto transports = start_world(2);
  Inbox survivor;
  survivor.attach(*transports[0]);
  Inbox leaver;
  leaver.attach(*transports[1]);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i) transports[1]->send(0, i, std::vector<uint8_t>(100000), [&](auto) { ++done; });
  const auto start = Clock::now();
  transports[1]->close();
  EXPECT_LT(Clock::now() - start, milliseconds(900)) << "close waited for its timeout";
  EXPECT_EQ(done, 50) << "every pending send completed by the time close() returned";
  auto& tcp = dynamic_cast<TcpTransport&>(*transports[0]);
  ASSERT_TRUE(wait_until([&] { return tcp.peer_departed(1); }, milliseconds(2000)));
  std::this_thread::sleep_for(milliseconds(1500));  // longer than peer_timeout
  EXPECT_EQ(survivor.error_count(), 0u);
  std::promise<std::exception_ptr> result;
  transports[0]->send(1, 0, {1}, [&](std::exception_ptr error) { result.set_value(error); });
  try {
    std::rethrow_exception(result.get_future().get());
    FAIL() << "send to a departed peer succeeded";
  } catch (const TransportError& error) {
    EXPECT_EQ(error.peer(), 1);
    EXPECT_NE(std::string(error.what()).find("left"), std::string::npos) << error.what();
  }
  ASSERT_TRUE(wait_until([&] { return survivor.error_count() == 1; }, milliseconds(1000)));
  EXPECT_EQ(survivor.errors[0].first.peer(), 1);
  std::promise<std::exception_ptr> after_close;
  transports[1]->send(0, 0, {}, [&](std::exception_ptr error) { after_close.set_value(error); });
  EXPECT_THROW(std::rethrow_exception(after_close.get_future().get()), TransportError);
}

// --- peers that do not show up ----------------------------------------------------------

TEST(TcpTransport, MissingRankIsNamedByRendezvous) {
  TcpOptions base = test_options(0, 1, 0);
  base.connect_timeout = milliseconds(1500);
  const auto start = Clock::now();
  try {
    start_world(3, base, 2);  // ranks 0 and 1 of three: rank 2 never comes
    FAIL() << "rendezvous succeeded without rank 2";
  } catch (const TransportError& error) {
    EXPECT_EQ(error.peer(), 2) << error.what();
    EXPECT_NE(std::string(error.what()).find("rank(s) 2"), std::string::npos) << error.what();
  }
  EXPECT_LT(Clock::now() - start, milliseconds(4000));
}

TEST(TcpTransport, ConnectTimeoutNamesThePeer) {
  TcpTransportConfig config;
  config.rank = 1;
  config.world_size = 3;
  config.listen_host = "127.0.0.1";
  TcpTransport transport(config);
  // Rank 0's address has nobody listening; rank 2 never dials in.
  asio::io_context io;
  asio::ip::tcp::acceptor placeholder(io, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t dead_port = placeholder.local_endpoint().port();
  placeholder.close();
  const std::vector<PeerAddress> peers = {{"127.0.0.1", dead_port}, {"127.0.0.1", transport.listen_port()}, {}};
  try {
    transport.connect(peers, milliseconds(500));
    FAIL() << "connected to nobody";
  } catch (const TransportError& error) {
    EXPECT_EQ(error.peer(), 0) << error.what();
    const std::string what = error.what();
    EXPECT_NE(what.find(fmt::format("rank 0 at 127.0.0.1:{}", dead_port)), std::string::npos) << what;
    EXPECT_NE(what.find("rank 2 (did not dial in)"), std::string::npos) << what;
  }
}

// --- throughput ---------------------------------------------------------------------------

// Rank 0 streams large messages to rank 1 (and, second, both ways at once);
// prints the goodput. Both ranks share this process's two cores, like two
// processes on one host would.
double measure_goodput(Transport& sender, Inbox& receiver, std::size_t message_bytes, int count) {
  const std::size_t before = receiver.message_count();
  std::vector<std::vector<uint8_t>> payloads;
  for (int i = 0; i < count; ++i) payloads.emplace_back(message_bytes, static_cast<uint8_t>(i));
  const auto start = Clock::now();
  for (auto& payload : payloads) sender.send(1 - sender.rank(), 0, std::move(payload), nullptr);
  EXPECT_TRUE(wait_until([&] { return receiver.message_count() == before + count; }, milliseconds(60000)));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(message_bytes) * count / seconds / 1e9;
}

TEST(TcpThroughput, TwoRankLoopback) {
  auto transports = start_world(2);
  Inbox inbox0, inbox1;
  inbox0.attach(*transports[0]);
  inbox1.attach(*transports[1]);
  constexpr std::size_t kMessage = 100 * 1000 * 1000;  // 100 MB, like the Gloo figure
  constexpr int kCount = 8;
  measure_goodput(*transports[0], inbox1, kMessage, 1);  // warm-up
  const double one_way = measure_goodput(*transports[0], inbox1, kMessage, kCount);
  std::cout << "[ throughput ] one way, " << kCount << " x 100 MB: " << one_way << " GB/s\n";
  const auto start = Clock::now();
  std::thread reverse([&] { measure_goodput(*transports[1], inbox0, kMessage, kCount / 2); });
  measure_goodput(*transports[0], inbox1, kMessage, kCount / 2);
  reverse.join();
  const double both = kMessage * double(kCount) / std::chrono::duration<double>(Clock::now() - start).count() / 1e9;
  std::cout << "[ throughput ] both ways at once, " << kCount << " x 100 MB in total: " << both << " GB/s\n";
  RecordProperty("one_way_GBps", std::to_string(one_way));
  RecordProperty("both_ways_GBps", std::to_string(both));
}

}  // namespace
}  // namespace st::comm
