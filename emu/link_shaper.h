#pragma once
// One WAN direction's bottleneck, on the sending end of its veth pair in
// router `from` (docs/emu.md, "Shaping"):
//
//   HTB 1: root, default class 1:1
//     class 1:1   rate = ceil = the trace step's rate       (changed over netlink at every step)
//       TBF 10:   the outage gate: open = far above any rate; closed = a bucket of one packet
//                 refilling at a few bytes per second        (0 Mbps steps)
//         bfifo 20:  limit = the direction's buffer in bytes (the bottleneck queue)
//         or netem 20: delay, loss, limit in packets         (kernels with sch_netem)
//
// Without netem the delay and loss are applied after the bottleneck by a
// DelayLine (NFQUEUE) in router `to`, reached through an iptables rule on
// the direction's receiving interface.
//
// Why a TBF gate for 0 Mbps rather than a tiny HTB rate: HTB charges a
// packet after sending it, so the one packet a tiny rate lets through leaves
// a debt of that packet's time at the tiny rate (up to a minute) that
// outlives the outage; TBF checks its tokens before sending and refills its
// bucket whenever it is changed, so reopening it carries no debt. Queued
// packets stay in the bfifo through the outage, as in the sim backend.
#include <memory>
#include <string>

#include "emu/delay_line.h"
#include "emu/emu_plan.h"
#include "emu/route_socket.h"
#include "traces/trace.h"

namespace st::emu {

enum class DelayMethod { kNfqueue, kNetem };
std::string to_string(DelayMethod method);

// Whether this kernel has sch_netem: tries a netem root qdisc on `ifname`
// (an interface of the socket's namespace, e.g. "lo") and removes it.
bool kernel_has_netem(RouteSocket& socket, const std::string& ifname);

struct LinkCounters {
  uint64_t bytes = 0;    // left the bottleneck (the HTB class), wire bytes with Ethernet header
  uint64_t packets = 0;
  uint64_t drops = 0;    // at the bottleneck queue (overflow)
  uint64_t lost = 0;     // dropped by the trace's loss (delay line; netem counts them in drops)
  bool delay_measured = false;  // by the delay line (netem's timing is the kernel's and is not seen)
  uint64_t late_packets = 0;    // the delay line's DelayLineStats
  double worst_late_ms = 0;
};

class LinkShaper {
 public:
  // Installs the qdiscs on `sender` (the socket of router `from`), and with
  // kNfqueue the delay line and its iptables rule in `receiver_netns`.
  // `first` is the step in force before the replay starts. Throws EmuError
  // (with kNetem: a message starting "netem unavailable" when the kernel
  // lacks it; nothing of the direction is left installed in that case).
  LinkShaper(const EmuWanDirection& direction, int mtu, RouteSocket& sender, const std::string& receiver_netns,
             DelayMethod method, uint64_t seed, const traces::TraceStep& first);
  ~LinkShaper();
  LinkShaper(const LinkShaper&) = delete;
  LinkShaper& operator=(const LinkShaper&) = delete;

  // A trace step starts: rate (0 closes the gate), delay (a negative step
  // delay means the direction's own), loss.
  void apply(const traces::TraceStep& step);
  LinkCounters counters();
  const EmuWanDirection& direction() const { return direction_; }

 private:
  void set_rate(double mbps);
  void set_gate(bool open);
  void set_delay(double delay_ms, double loss, bool create);
  void kick();

  EmuWanDirection direction_;
  int mtu_;
  RouteSocket& sender_;
  DelayMethod method_;
  std::unique_ptr<DelayLine> delay_line_;
  UniqueFd kick_socket_;
  int kick_ifindex_ = 0;
  bool gate_open_ = true;
  double rate_mbps_ = 0;
  double delay_ms_ = -1;
  double loss_ = -1;
};

}  // namespace st::emu
