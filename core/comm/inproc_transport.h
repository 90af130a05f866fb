#pragma once
// In-process Transport: `world_size` connected endpoints inside one process,
// for unit tests and single-host runs with threads.
//
// Every message goes through one delivery thread owned by the fabric; send()
// only queues it, so handlers never run inside send(). A message can be made
// slow on purpose, per directed link (from -> to):
//
//   wire time   = bytes / bytes_per_second   (the link is busy meanwhile, so
//                                             messages on one link queue)
//   on_done     fires once the wire time has passed ("on the wire")
//   delivery    = on_done + latency + jitter (uniform in [0, jitter), seeded)
//
// Per-pair order always holds: a message is never delivered before an
// earlier one on the same link, whatever the jitter. Jitter on different
// links reorders completions between peers, which is what the collective
// tests want to exercise.
//
// The delay runs on the steady clock (real time) on purpose: this transport
// is test infrastructure for the real thread-pool executor. The ns-3
// transport (sim/) is the one that models delay in virtual time.
//
// Failures: closing an endpoint (Transport::close(), or fail(rank) to also
// tell the failed rank itself) completes its pending sends with an error,
// drops every undelivered message to or from it, and reports a
// TransportError naming it to every other endpoint's error handler. Sends to
// or from a closed endpoint complete with that error. A destination outside
// the world is a caller bug: send() throws std::invalid_argument.
#include <chrono>
#include <memory>
#include <vector>

#include "core/comm/transport.h"

namespace st::comm {

struct LinkDelay {
  std::chrono::nanoseconds latency{0};
  double bytes_per_second = 0;  // 0: unlimited (no wire time)
  std::chrono::nanoseconds jitter{0};
};

class InProcFabric {
 public:
  // Links between distinct ranks get `delay`; a rank's link to itself has
  // none (loopback) unless set_link_delay() says otherwise.
  explicit InProcFabric(int world_size, LinkDelay delay = {}, uint64_t jitter_seed = 1);
  ~InProcFabric();  // shutdown(), then the endpoints go

  // Closes every endpoint and stops the delivery thread, keeping the
  // endpoints: a send from now on fails and its callback never runs, so
  // threads of the caller's that still hold an endpoint may finish before
  // the fabric is destroyed. Idempotent.
  void shutdown();
  InProcFabric(const InProcFabric&) = delete;
  InProcFabric& operator=(const InProcFabric&) = delete;

  int world_size() const;
  Transport& endpoint(Rank rank);

  // Applies to messages sent from now on.
  void set_link_delay(Rank from, Rank to, LinkDelay delay);

  // Simulates a crash of `rank`: like endpoint(rank).close(), and the failed
  // rank's own error handler also gets a TransportError naming itself, so
  // its own pending receives fail instead of waiting.
  void fail(Rank rank);

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace st::comm
