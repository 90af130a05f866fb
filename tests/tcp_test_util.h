#pragma once
// Helpers shared by the TCP transport tests (tcp_transport_test.cc,
// tcp_failure_test.cc): worlds of ranks inside one process, an inbox per
// rank, deterministic payloads.
#include <gtest/gtest.h>

#include <malloc.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "core/comm/rendezvous.h"
#include "core/comm/tcp_transport.h"

namespace st::comm::test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// On these VMs (Firecracker with free-page reporting) first-touching fresh
// memory runs at about 0.2 GB/s, and glibc hands every message above 32 MiB
// back to the kernel when it is freed. Keeping freed memory in the heap
// makes the tests fast and the throughput figure about the transport (see
// docs/transport.md for the trainer).
inline void keep_freed_memory() {
  mallopt(M_ARENA_MAX, 1);  // thread arenas cannot hold 100 MB blocks
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
}
inline const bool kMemoryKept = (keep_freed_memory(), true);

inline TcpOptions test_options(Rank rank, int world_size, uint16_t store_port) {
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
inline std::vector<std::unique_ptr<Transport>> start_world(int world_size, TcpOptions base = test_options(0, 1, 0),
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

inline bool wait_until(const std::function<bool()>& done, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

// Collects what one rank receives and the errors it is told about. Declare
// it before the transports it is attached to, so that it outlives them.
// With `check` set, payloads are checked on arrival and then dropped (so
// large transfers do not pile up in memory); `rejected` counts failures.
struct Inbox {
  std::mutex mutex;
  std::vector<Message> messages;
  std::vector<std::pair<TransportError, Clock::time_point>> errors;
  std::function<bool(const Message&)> check;
  std::size_t rejected = 0;

  void attach(Transport& transport) {
    transport.on_receive([this](Message&& message) {
      const bool good = !check || check(message);
      if (check) std::vector<uint8_t>().swap(message.payload);
      std::lock_guard lock(mutex);
      if (!good) ++rejected;
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

inline uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

inline std::vector<uint8_t> make_payload(std::size_t size, uint64_t seed) {
  std::vector<uint8_t> payload(size);
  for (std::size_t i = 0; i < size; i += 8) {
    const uint64_t word = mix(seed + i);
    std::memcpy(payload.data() + i, &word, std::min<std::size_t>(8, size - i));
  }
  return payload;
}

inline uint64_t seed_of(Rank source, Rank destination, uint32_t sequence) {
  return (uint64_t(source) << 48) ^ (uint64_t(destination) << 32) ^ sequence;
}

// Every rank sends every size to every rank (itself included), in order.

inline void expect_send_fails(Transport& transport, Rank peer) {
  std::promise<std::exception_ptr> result;
  transport.send(peer, 0, {1}, [&](std::exception_ptr error) { result.set_value(error); });
  try {
    std::rethrow_exception(result.get_future().get());
    ADD_FAILURE() << "send to a failed peer succeeded";
  } catch (const TransportError& error) {
    EXPECT_EQ(error.peer(), peer);
  }
}

}  // namespace st::comm::test
