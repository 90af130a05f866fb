#pragma once
// Internal: the bookkeeping every ring collective shares, so the algorithms
// only say what to send and what to do with what arrives.
//
// One RingRun is one collective on one rank. It sends to rank+1 and
// receives from rank-1, one message per step, each step on its own tag
// (collective_tag(id, step)). It counts the operations in flight and calls
// the finisher once: with null when every send completed and every expected
// message was handled, or with the first error.
//
// Every message starts with a 4-byte header: kind (0 data, 1 abort) and
// three zero bytes (so a float body stays 4-byte aligned). When a rank fails
// for a reason its neighbour cannot see (bad data, a peer's abort), it sends
// an abort, carrying the root cause as text, on the first step it has not
// sent yet: rank+1 is necessarily waiting for that step or an earlier one,
// so the abort reaches a receive it has posted, and rank+1 fails and
// forwards the abort in turn. No rank waits forever for a message that will
// never come.
//
// Data messages go out through send_standing_for with their WireScale's
// size (their own, unless they carry a sample) and the stats count it.
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/collective/communicator.h"
#include "core/collective/wire_scale.h"

namespace st::collective::detail {

constexpr std::size_t kHeaderBytes = 4;
enum class MessageKind : uint8_t { kData = 0, kAbort = 1 };

// A data message with `body_bytes` of room after the header.
std::vector<uint8_t> data_payload(std::size_t body_bytes);

// Rethrows to read the text of any exception_ptr.
std::string describe(std::exception_ptr error);

class RingRun : public std::enable_shared_from_this<RingRun> {
 public:
  using Finisher = std::function<void(std::exception_ptr error, const CollectiveStats& stats)>;
  // Runs on an executor worker with the whole payload (header included, so
  // it can be forwarded as is); throwing fails the collective.
  using MessageHandler = std::function<void(std::vector<uint8_t>&& payload)>;

  // `send_steps`: every step at which this rank will send, ascending. The
  // run fails as soon as the communicator breaks (at once if it is broken).
  static std::shared_ptr<RingRun> create(Communicator& comm, uint32_t collective_id, std::vector<int> send_steps,
                                         Finisher finisher, WireScale scale = {});
  RingRun(Communicator& comm, uint32_t collective_id, std::vector<int> send_steps, Finisher finisher,
          WireScale scale);

  uint32_t id() const { return id_; }
  Rank next_rank() const { return (comm_.rank() + 1) % comm_.world_size(); }
  Rank previous_rank() const { return (comm_.rank() + comm_.world_size() - 1) % comm_.world_size(); }

  // Posts the receive for `step` from the previous rank.
  void expect(int step, MessageHandler handler);
  // Sends a data payload (from data_payload()) to the next rank; dropped
  // when the run has already failed.
  void send(int step, std::vector<uint8_t> payload);
  // Fails the run for a local reason; the abort goes downstream.
  void fail(std::exception_ptr error);
  // Call once after the initial expect()/send() calls: the run cannot
  // finish before that.
  void started() { operation_done(); }

 private:
  void on_message(int step, std::vector<uint8_t>&& payload, uint64_t wire_bytes, const MessageHandler& handler);
  void fail_with(std::exception_ptr error, std::string root_cause);
  void operation_done();
  void finish(std::exception_ptr error, CollectiveStats stats);

  Communicator& comm_;
  const uint32_t id_;
  const std::vector<int> send_steps_;
  const WireScale scale_;
  const std::chrono::nanoseconds started_at_;
  std::mutex mutex_;
  Finisher finisher_;
  uint64_t watch_id_ = 0;
  std::vector<comm::Mailbox::ReceiveId> receives_;
  std::vector<bool> step_sent_;  // parallel to send_steps_
  CollectiveStats stats_;
  int outstanding_ = 1;  // the start token, released by started()
  bool failed_ = false;
  bool finished_ = false;
};

}  // namespace st::collective::detail
