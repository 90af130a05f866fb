#pragma once
// The user-space delay line for kernels without sch_netem: an iptables rule
// in the receiving router's namespace hands every packet arriving from one
// WAN direction to an NFQUEUE queue; this thread holds each packet's verdict
// until its one-way delay has passed (and drops a step's loss fraction),
// then accepts it. Payloads stay in the kernel (NFQNL_COPY_META): only
// packet ids cross into user space.
//
// Timing: one thread per direction sleeps with ppoll until the next packet
// is due (timer slack 1 us), so a packet leaves within tens of microseconds
// of its time on an idle core (docs/emu.md has the measurement). Packets
// keep their order while the delay is constant; a delay decrease may let
// later packets overtake earlier ones, as on the sim backend.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

namespace st::emu {

struct DelayLineOptions {
  std::string netns;  // where the NFQUEUE rule is (the receiving router)
  uint16_t queue = 0;
  double delay_ms = 20;
  double loss = 0;       // drop probability per packet
  uint64_t seed = 1;     // of the loss draws
  uint32_t max_packets = 65536;  // the kernel queue's length (beyond it: dropped, counted by the kernel)
};

struct DelayLineStats {
  uint64_t packets = 0;  // accepted after their delay
  uint64_t lost = 0;     // dropped by the loss draw
  // Released a millisecond or more after their due time: the thread was not
  // scheduled in time (a loaded host), so those packets saw a longer delay
  // than the link's. How far the emulation strayed from its delay.
  uint64_t late_packets = 0;
  double worst_late_ms = 0;
};

class DelayLine {
 public:
  // Binds the queue (inside `netns`) on its own thread; returns once it is
  // bound. Throws EmuError naming the namespace and queue when it cannot.
  explicit DelayLine(const DelayLineOptions& options);
  // Releases every held packet and unbinds.
  ~DelayLine();
  DelayLine(const DelayLine&) = delete;
  DelayLine& operator=(const DelayLine&) = delete;

  // A trace step's values, for packets arriving from now on.
  void set(double delay_ms, double loss);
  DelayLineStats stats() const;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::emu
