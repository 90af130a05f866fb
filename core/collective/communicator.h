#pragma once
// What every collective needs: the transport, the mailbox that demultiplexes
// its messages, the executor that runs the arithmetic, and the collective
// ids that keep tags of concurrent collectives apart.
//
// Tag scheme (docs/collectives.md):
//
//   bit 31      1 = collective traffic (0 is left to other users of the
//               transport, e.g. control messages)
//   bits 30..12 collective id modulo 2^19
//   bits 11..0  step within the collective (< 4096)
//
// Every rank must start its collectives in the same order (as in MPI and
// NCCL), so the n-th collective gets the same id everywhere. A collective
// whose parts start in a data-dependent order (the buckets of
// BucketedAllreduce) reserves a block of ids up front, when every rank is at
// the same point. Ids wrap after 2^19 collectives; two collectives collide
// only if 2^19 others started while one was still in flight.
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/comm/mailbox.h"
#include "core/comm/transport.h"
#include "core/runtime/executor.h"

namespace st::collective {

using comm::Rank;

constexpr uint32_t kCollectiveTagBit = 1u << 31;
constexpr int kStepBits = 12;
constexpr uint32_t kMaxSteps = 1u << kStepBits;  // steps 0 .. 4095
constexpr uint32_t kCollectiveIdMask = (1u << (31 - kStepBits)) - 1;

constexpr uint32_t collective_tag(uint32_t collective_id, uint32_t step) {
  return kCollectiveTagBit | ((collective_id & kCollectiveIdMask) << kStepBits) | (step & (kMaxSteps - 1));
}

// Traffic and time of one collective on one rank, for telemetry. Bytes are
// transport payload bytes (the 4-byte collective header included).
struct CollectiveStats {
  uint64_t bytes_sent = 0;
  uint64_t bytes_received = 0;
  uint64_t messages_sent = 0;
  uint64_t messages_received = 0;
  std::chrono::nanoseconds elapsed{0};  // start to completion, executor clock

  CollectiveStats& operator+=(const CollectiveStats& other);
};

// Why a collective failed when the transport did not say (bad data, a peer
// that aborted, wrong arguments). Transport failures arrive as
// comm::TransportError.
class CollectiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `error` is null on success. Runs exactly once, on an executor worker.
using DoneCallback = std::function<void(std::exception_ptr error, const CollectiveStats& stats)>;

class Communicator {
 public:
  // The mailbox must be the one installed on `transport`. All three must
  // outlive every collective started here.
  Communicator(comm::Transport& transport, comm::Mailbox& mailbox, runtime::Executor& executor);

  Rank rank() const { return transport_.rank(); }
  int world_size() const { return transport_.world_size(); }
  comm::Transport& transport() const { return transport_; }
  comm::Mailbox& mailbox() const { return mailbox_; }
  runtime::Executor& executor() const { return executor_; }

  // The id of the next collective (same sequence on every rank).
  uint32_t next_collective_id() { return reserve_collective_ids(1); }
  // Reserves `count` consecutive ids and returns the first.
  uint32_t reserve_collective_ids(uint32_t count);

  // A collective spans every rank, so any transport error breaks the
  // communicator for good (as in Gloo and NCCL): every collective in flight
  // fails with that error, at once, even one that is not waiting for the
  // lost peer, and so does every collective started later. Ranks thus agree
  // on failure instead of some applying a result the others never get.
  using BrokenHandler = std::function<void(std::exception_ptr error)>;
  // Calls `handler` once when the communicator breaks (inline, at once, if
  // it already is; then returns 0). Returns an id for unwatch().
  uint64_t watch(BrokenHandler handler);
  void unwatch(uint64_t id);
  std::exception_ptr broken() const;

 private:
  struct Watchers {
    std::mutex mutex;
    std::map<uint64_t, BrokenHandler> handlers;
    std::exception_ptr broken;
    uint64_t next_id = 1;
  };

  comm::Transport& transport_;
  comm::Mailbox& mailbox_;
  runtime::Executor& executor_;
  std::mutex mutex_;
  uint32_t next_id_ = 0;
  // Shared with the mailbox's error observer, which may outlive this object.
  std::shared_ptr<Watchers> watchers_ = std::make_shared<Watchers>();
};

}  // namespace st::collective
