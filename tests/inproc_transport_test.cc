// In-process transport and mailbox: ordering, delay, stats, failures.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"

namespace st::comm {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Collects events from transport threads; the test thread waits on it.
class Recorder {
 public:
  void add(std::function<void()> record) {
    std::lock_guard<std::mutex> lock(mutex_);
    record();
    ++count_;
    cv_.notify_all();
  }
  bool wait_for(int count, std::chrono::milliseconds limit = 5000ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, limit, [&] { return count_ >= count; });
  }
  std::mutex& mutex() { return mutex_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int count_ = 0;
};

std::vector<uint8_t> bytes(std::size_t n, uint8_t fill = 7) { return std::vector<uint8_t>(n, fill); }

TEST(InProcTransport, KeepsOrderPerPairUnderJitterAndSendsToSelf) {
  InProcFabric fabric(3, LinkDelay{0ms, 0, 3ms}, 42);
  fabric.set_link_delay(0, 0, LinkDelay{0ms, 0, 3ms});
  Recorder recorder;
  std::vector<Message> at_one, at_zero;
  fabric.endpoint(1).on_receive([&](Message&& m) { recorder.add([&] { at_one.push_back(std::move(m)); }); });
  fabric.endpoint(0).on_receive([&](Message&& m) { recorder.add([&] { at_zero.push_back(std::move(m)); }); });
  constexpr uint32_t kMessages = 50;
  for (uint32_t tag = 0; tag < kMessages; ++tag) {
    fabric.endpoint(0).send(1, tag, bytes(tag), nullptr);
    fabric.endpoint(2).send(1, 1000 + tag, bytes(1), nullptr);
    fabric.endpoint(0).send(0, tag, bytes(3), nullptr);
  }
  ASSERT_TRUE(recorder.wait_for(3 * kMessages));
  std::lock_guard<std::mutex> lock(recorder.mutex());
  uint32_t next_from_zero = 0, next_from_two = 1000;
  for (const Message& m : at_one) {
    if (m.source == 0) {
      EXPECT_EQ(m.tag, next_from_zero++);
      EXPECT_EQ(m.payload.size(), m.tag);
    } else {
      EXPECT_EQ(m.source, 2);
      EXPECT_EQ(m.tag, next_from_two++);
    }
  }
  EXPECT_EQ(next_from_zero, kMessages);
  ASSERT_EQ(at_zero.size(), kMessages);
  for (uint32_t i = 0; i < kMessages; ++i) EXPECT_EQ(at_zero[i].tag, i);
}

TEST(InProcTransport, CompletesSendsOnTheDeliveryThreadAndCountsStats) {
  InProcFabric fabric(2);
  Recorder recorder;
  std::vector<std::thread::id> done_threads;
  fabric.endpoint(1).on_receive([&](Message&&) { recorder.add([] {}); });
  for (int i = 0; i < 4; ++i)
    fabric.endpoint(0).send(1, 9, bytes(100), [&](std::exception_ptr error) {
      EXPECT_FALSE(error);
      recorder.add([&] { done_threads.push_back(std::this_thread::get_id()); });
    });
  ASSERT_TRUE(recorder.wait_for(8));
  {
    std::lock_guard<std::mutex> lock(recorder.mutex());
    for (auto id : done_threads) EXPECT_NE(id, std::this_thread::get_id());
  }
  const auto sent = fabric.endpoint(0).stats();
  const auto received = fabric.endpoint(1).stats();
  EXPECT_EQ(sent.messages_sent, 4u);
  EXPECT_EQ(sent.bytes_sent, 400u);
  EXPECT_EQ(received.messages_received, 4u);
  EXPECT_EQ(received.bytes_received, 400u);
  EXPECT_EQ(sent.bytes_received, 0u);
}

TEST(InProcTransport, HonoursBandwidthThenLatency) {
  // 2 MB at 10 MB/s: 200 ms on the wire, then 300 ms of latency. Long
  // enough that a wake-up delayed by a loaded machine (tests run side by
  // side, some under sanitizers) stays within the slack, and that "on the
  // wire" (by 200 + slack) still comes before the latency could have passed.
  constexpr auto kSlack = 150ms;
  InProcFabric fabric(2, LinkDelay{300ms, 10e6, 0ms});
  Recorder recorder;
  Clock::time_point on_wire, delivered;
  fabric.endpoint(1).on_receive([&](Message&&) { recorder.add([&] { delivered = Clock::now(); }); });
  const auto start = Clock::now();
  fabric.endpoint(0).send(1, 0, bytes(2'000'000), [&](std::exception_ptr) { recorder.add([&] { on_wire = Clock::now(); }); });
  ASSERT_TRUE(recorder.wait_for(2));
  std::lock_guard<std::mutex> lock(recorder.mutex());
  EXPECT_GE(on_wire - start, 200ms);
  EXPECT_LT(on_wire - start, 200ms + kSlack);
  EXPECT_GE(delivered - start, 500ms);
  EXPECT_LT(delivered - start, 500ms + kSlack);
}

TEST(InProcTransport, QueuesMessagesOnABusyLink) {
  InProcFabric fabric(2, LinkDelay{0ms, 10e6, 0ms});
  Recorder recorder;
  Clock::time_point second_on_wire;
  const auto start = Clock::now();
  fabric.endpoint(0).send(1, 0, bytes(100'000), [&](std::exception_ptr) { recorder.add([] {}); });
  fabric.endpoint(0).send(1, 1, bytes(100'000),
                          [&](std::exception_ptr) { recorder.add([&] { second_on_wire = Clock::now(); }); });
  ASSERT_TRUE(recorder.wait_for(2));
  std::lock_guard<std::mutex> lock(recorder.mutex());
  EXPECT_GE(second_on_wire - start, 20ms);  // 10 ms each, one after the other
}

TEST(InProcTransport, ClosingAnEndpointReportsItToThePeersAndFailsSends) {
  InProcFabric fabric(3, LinkDelay{0ms, 1e5, 0ms});  // 100 kB/s: a 50 kB send takes 0.5 s
  Recorder recorder;
  std::vector<std::pair<Rank, Rank>> reports;  // (who heard, peer named)
  for (Rank r = 0; r < 3; ++r)
    fabric.endpoint(r).on_error([&, r](const TransportError& e) { recorder.add([&] { reports.emplace_back(r, e.peer()); }); });
  std::exception_ptr pending_error, later_error;
  const auto start = Clock::now();
  fabric.endpoint(0).send(1, 0, bytes(50'000), [&](std::exception_ptr e) { recorder.add([&] { pending_error = e; }); });
  std::this_thread::sleep_for(10ms);
  fabric.endpoint(1).close();
  fabric.endpoint(1).close();  // idempotent
  fabric.endpoint(2).send(1, 0, bytes(1), [&](std::exception_ptr e) { recorder.add([&] { later_error = e; }); });
  ASSERT_TRUE(recorder.wait_for(4));
  EXPECT_LT(Clock::now() - start, 400ms);  // the pending send did not run its course
  std::this_thread::sleep_for(20ms);
  std::lock_guard<std::mutex> lock(recorder.mutex());
  ASSERT_EQ(reports.size(), 2u);  // ranks 0 and 2, not the closed rank itself
  for (auto [who, peer] : reports) {
    EXPECT_NE(who, 1);
    EXPECT_EQ(peer, 1);
  }
  for (auto error : {pending_error, later_error}) {
    ASSERT_TRUE(error);
    try {
      std::rethrow_exception(error);
    } catch (const TransportError& e) {
      EXPECT_EQ(e.peer(), 1);
    }
  }
}

TEST(InProcTransport, FailTellsTheFailedRankToo) {
  InProcFabric fabric(2);
  Recorder recorder;
  std::vector<Rank> heard;
  for (Rank r = 0; r < 2; ++r)
    fabric.endpoint(r).on_error([&, r](const TransportError& e) {
      EXPECT_EQ(e.peer(), 1);
      recorder.add([&] { heard.push_back(r); });
    });
  fabric.fail(1);
  ASSERT_TRUE(recorder.wait_for(2));
}

TEST(Mailbox, MatchesBySourceAndTagWhicheverComesFirst) {
  InProcFabric fabric(3);
  Mailbox mailbox(fabric.endpoint(0));
  Recorder recorder;
  std::vector<std::vector<uint8_t>> got;
  auto keep = [&](std::exception_ptr error, Message&& m) {
    EXPECT_FALSE(error);
    recorder.add([&] { got.push_back(m.payload); });
  };
  fabric.endpoint(1).send(0, 5, bytes(1, 1), nullptr);  // early
  fabric.endpoint(2).send(0, 5, bytes(1, 2), nullptr);  // same tag, other source
  fabric.endpoint(1).send(0, 5, bytes(1, 3), nullptr);  // same key: FIFO
  while (mailbox.buffered_messages() < 3) std::this_thread::sleep_for(1ms);
  mailbox.recv(1, 5, keep);
  mailbox.recv(1, 5, keep);
  mailbox.recv(2, 5, keep);
  mailbox.recv(1, 6, keep);  // late: pending until the message comes
  EXPECT_EQ(mailbox.pending_receives(), 1u);
  fabric.endpoint(1).send(0, 6, bytes(1, 4), nullptr);
  ASSERT_TRUE(recorder.wait_for(4));
  std::lock_guard<std::mutex> lock(recorder.mutex());
  EXPECT_EQ(got, (std::vector<std::vector<uint8_t>>{{1}, {3}, {2}, {4}}));
  EXPECT_EQ(mailbox.buffered_messages(), 0u);
}

TEST(Mailbox, CancelledReceiveNeverFires) {
  InProcFabric fabric(2);
  Mailbox mailbox(fabric.endpoint(0));
  bool fired = false;
  const auto id = mailbox.recv(1, 3, [&](std::exception_ptr, Message&&) { fired = true; });
  EXPECT_TRUE(mailbox.cancel(id));
  EXPECT_FALSE(mailbox.cancel(id));
  fabric.endpoint(1).send(0, 3, bytes(1), nullptr);
  while (mailbox.buffered_messages() < 1) std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(fired);
}

TEST(Mailbox, PeerFailureFailsItsReceivesButKeepsWhatArrived) {
  InProcFabric fabric(3);
  Mailbox mailbox(fabric.endpoint(0));
  Recorder recorder;
  fabric.endpoint(1).send(0, 1, bytes(2), nullptr);
  while (mailbox.buffered_messages() < 1) std::this_thread::sleep_for(1ms);
  std::exception_ptr pending_error, after_error, arrived_error;
  bool other_peer_fired = false;
  std::atomic<int> observed{0};
  mailbox.on_error([&](const TransportError& e) { observed += e.peer() == 1; });
  mailbox.recv(1, 2, [&](std::exception_ptr e, Message&&) { recorder.add([&] { pending_error = e; }); });
  mailbox.recv(2, 2, [&](std::exception_ptr, Message&&) { other_peer_fired = true; });
  fabric.endpoint(1).close();
  ASSERT_TRUE(recorder.wait_for(1));
  mailbox.recv(1, 1, [&](std::exception_ptr e, Message&& m) {
    EXPECT_EQ(m.payload.size(), 2u);
    recorder.add([&] { arrived_error = e; });
  });
  mailbox.recv(1, 3, [&](std::exception_ptr e, Message&&) { recorder.add([&] { after_error = e; }); });
  ASSERT_TRUE(recorder.wait_for(3));
  // Observers run after the receives have failed.
  for (int i = 0; i < 1000 && observed.load() == 0; ++i) std::this_thread::sleep_for(1ms);
  std::lock_guard<std::mutex> lock(recorder.mutex());
  EXPECT_TRUE(pending_error);
  EXPECT_TRUE(after_error);
  EXPECT_FALSE(arrived_error);
  EXPECT_FALSE(other_peer_fired);  // rank 2 is still alive
  EXPECT_EQ(observed.load(), 1);
}

TEST(Mailbox, OwnFailureFailsEveryReceive) {
  InProcFabric fabric(3);
  Mailbox mailbox(fabric.endpoint(0));
  Recorder recorder;
  int errors = 0;
  for (Rank source : {1, 2})
    mailbox.recv(source, 0, [&](std::exception_ptr e, Message&&) { recorder.add([&] { errors += e != nullptr; }); });
  fabric.fail(0);
  ASSERT_TRUE(recorder.wait_for(2));
  std::lock_guard<std::mutex> lock(recorder.mutex());
  EXPECT_EQ(errors, 2);
}

TEST(Mailbox, MayBeDestroyedBeforeTheTransport) {
  InProcFabric fabric(2);
  {
    Mailbox mailbox(fabric.endpoint(0));
    mailbox.recv(1, 0, [](std::exception_ptr, Message&&) { ADD_FAILURE() << "dropped receive fired"; });
  }
  // A mailbox attached afterwards gets the message: the destroyed one's
  // receive neither fired nor kept the transport's handler.
  Recorder recorder;
  Mailbox successor(fabric.endpoint(0));
  successor.recv(1, 0, [&](std::exception_ptr e, Message&& m) {
    recorder.add([&] {
      EXPECT_EQ(e, nullptr);
      EXPECT_EQ(m.payload.size(), 1u);
    });
  });
  fabric.endpoint(1).send(0, 0, bytes(1), nullptr);
  ASSERT_TRUE(recorder.wait_for(1));
}

}  // namespace
}  // namespace st::comm
