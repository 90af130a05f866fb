#include "emu/link_shaper.h"

#include <fmt/format.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "emu/process.h"

namespace st::emu {
namespace {

constexpr uint32_t kRoot = tc_handle(1, 0);
constexpr uint32_t kClass = tc_handle(1, 1);
constexpr uint32_t kGate = tc_handle(0x10, 0);  // "10:" in tc's hexadecimal
constexpr uint32_t kGateChild = tc_handle(0x10, 1);
constexpr uint32_t kQueue = tc_handle(0x20, 0);  // "20:"
constexpr uint32_t kQuantum = 60000;
constexpr int kEthernetHeader = 14;
// The gate's open rate: the largest libnl's TBF takes (an int of bytes/s,
// 17 Gbit/s), above every rate the emulator shapes (emu_plan.h).
constexpr int kOpenGateBytesPerSecond = INT_MAX;
constexpr int kOpenGateBucket = 1 << 20;  // > a 64 KiB GSO packet, so TBF never splits one
// libnl computes TBF's bucket time as an int of ticks (64 ns): keep it
// under 100 s, i.e. the closed rate at least bucket / 100 bytes per second.
constexpr double kClosedGateBucketSeconds = 100;
// The kick frame's EtherType (IEEE 802 local experimental): the far end drops it.
constexpr uint16_t kKickEtherType = 0x88B5;

uint64_t bytes_per_second(double mbps) { return static_cast<uint64_t>(std::llround(mbps * 1e6 / 8)); }

// HTB's burst: one millisecond at the rate, at least two full frames.
uint32_t burst_bytes(double mbps, int mtu) {
  const double burst = std::max(2.0 * (mtu + kEthernetHeader), mbps * 1e6 / 8 * 0.001);
  return static_cast<uint32_t>(std::min(burst, 1e9));
}

}  // namespace

bool kernel_has_netem(RouteSocket& socket, const std::string& ifname) {
  try {
    socket.set_netem(ifname, TC_H_ROOT, tc_handle(0xfff0, 0), 1, 0, 1000, true);
  } catch (const EmuError& e) {
    if (std::string(e.what()).rfind("netem unavailable", 0) == 0) return false;
    throw;
  }
  socket.delete_root_qdisc(ifname);
  return true;
}

std::string to_string(DelayMethod method) { return method == DelayMethod::kNetem ? "netem" : "nfqueue"; }

LinkShaper::LinkShaper(const EmuWanDirection& direction, int mtu, RouteSocket& sender, const std::string& receiver_netns,
                       DelayMethod method, uint64_t seed, const traces::TraceStep& first)
    : direction_(direction), mtu_(mtu), sender_(sender), method_(method) {
  const std::string& out = direction_.out_ifname;
  const int limit = static_cast<int>(std::max(direction_.buffer_bytes, 2.0 * (mtu + kEthernetHeader)));
  rate_mbps_ = first.mbps > 0 ? first.mbps : direction_.max_mbps;
  sender_.add_htb_root(out, kRoot, kClass);
  sender_.set_htb_class(out, kRoot, kClass, bytes_per_second(rate_mbps_), burst_bytes(rate_mbps_, mtu_), kQuantum);
  sender_.set_tbf(out, kClass, kGate, kOpenGateBytesPerSecond, kOpenGateBucket, limit, true);
  const double delay = first.delay_ms >= 0 ? first.delay_ms : direction_.delay_ms;
  if (method_ == DelayMethod::kNetem) {
    set_delay(delay, first.loss, true);
  } else {
    sender_.add_bfifo(out, kGateChild, kQueue, limit);
    DelayLineOptions options;
    options.netns = receiver_netns;
    options.queue = direction_.queue_number;
    options.delay_ms = delay;
    options.loss = first.loss;
    options.seed = seed * 1000003 + direction_.queue_number;
    delay_line_ = std::make_unique<DelayLine>(options);
    delay_ms_ = delay;
    loss_ = first.loss;
    // The rule lives in the receiving router's namespace and goes with it.
    std::string output;
    const std::vector<std::string> rule = {"iptables", "-w", "10", "-t", "mangle", "-A", "PREROUTING", "-i",
                                           direction_.in_ifname, "-j", "NFQUEUE", "--queue-num",
                                           std::to_string(direction_.queue_number)};
    const int status = run_in_netns(receiver_netns, rule, output);
    if (status != 0)
      throw EmuError(fmt::format("{}: iptables rule for the delay line of {} failed ({}): {}{}", receiver_netns,
                                 direction_.name, status == 127 ? "iptables not found" : fmt::format("status {}", status),
                                 output, status == 127 ? " (install the iptables package)" : ""));
  }
  // A packet socket on the sending interface, to wake the queue after an outage.
  {
    NetnsScope inside(sender_.netns());
    kick_socket_ = UniqueFd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
  }
  if (!kick_socket_) throw EmuError(fmt::format("{}: packet socket: {}", sender_.netns(), std::strerror(errno)));
  kick_ifindex_ = sender_.ifindex(out);
  if (first.mbps <= 0) set_gate(false);
}

LinkShaper::~LinkShaper() = default;

void LinkShaper::set_rate(double mbps) {
  if (mbps == rate_mbps_) return;
  sender_.set_htb_class(direction_.out_ifname, kRoot, kClass, bytes_per_second(mbps), burst_bytes(mbps, mtu_), kQuantum);
  rate_mbps_ = mbps;
}

void LinkShaper::set_gate(bool open) {
  const int limit = static_cast<int>(std::max(direction_.buffer_bytes, 2.0 * (mtu_ + kEthernetHeader)));
  if (open) {
    sender_.set_tbf(direction_.out_ifname, kClass, kGate, kOpenGateBytesPerSecond, kOpenGateBucket, limit, false);
  } else {
    // One full frame fits the bucket (smaller packets would be dropped on
    // arrival instead of queued); it refills too slowly to matter.
    const int bucket = mtu_ + 100;
    const int rate = static_cast<int>(std::ceil(bucket / kClosedGateBucketSeconds));
    sender_.set_tbf(direction_.out_ifname, kClass, kGate, rate, bucket, limit, false);
  }
  gate_open_ = open;
}

// Reopening the gate does not make the kernel look at the queue again (TBF's
// timer was set for the closed rate); the next packet to arrive does. This
// sends that packet: a minimum Ethernet frame the far end discards.
void LinkShaper::kick() {
  unsigned char frame[60] = {};
  std::memset(frame, 0xff, 6);  // broadcast destination; source left zero
  frame[12] = kKickEtherType >> 8;
  frame[13] = kKickEtherType & 0xff;
  sockaddr_ll to{};
  to.sll_family = AF_PACKET;
  to.sll_ifindex = kick_ifindex_;
  to.sll_halen = ETH_ALEN;
  std::memset(to.sll_addr, 0xff, ETH_ALEN);
  to.sll_protocol = htons(kKickEtherType);
  // A failure leaves the queue for the next arriving packet: not fatal.
  (void)sendto(kick_socket_.get(), frame, sizeof(frame), 0, reinterpret_cast<const sockaddr*>(&to), sizeof(to));
}

void LinkShaper::set_delay(double delay_ms, double loss, bool create) {
  if (!create && delay_ms == delay_ms_ && loss == loss_) return;
  if (method_ == DelayMethod::kNetem) {
    // netem holds the packets in flight as well as the queue, in packets.
    const double in_flight = direction_.max_mbps * 1e6 / 8 * std::max(delay_ms, direction_.delay_ms) / 1000;
    const int limit = static_cast<int>(std::ceil((direction_.buffer_bytes + in_flight) / mtu_)) + 16;
    sender_.set_netem(direction_.out_ifname, kGateChild, kQueue, delay_ms, loss, limit, create);
  } else {
    delay_line_->set(delay_ms, loss);
  }
  delay_ms_ = delay_ms;
  loss_ = loss;
}

void LinkShaper::apply(const traces::TraceStep& step) {
  const double delay = step.delay_ms >= 0 ? step.delay_ms : direction_.delay_ms;
  if (step.mbps > 0) {
    set_rate(step.mbps);
    if (!gate_open_) {
      set_gate(true);
      kick();
    }
  } else if (gate_open_) {
    set_gate(false);  // the class keeps its rate: it applies again once the gate opens
  }
  set_delay(delay, step.loss, false);
}

LinkCounters LinkShaper::counters() {
  const TcCounters sent = sender_.class_counters(direction_.out_ifname, kClass);
  const TcCounters queue = sender_.qdisc_counters(direction_.out_ifname, kQueue);
  LinkCounters c;
  c.bytes = sent.bytes;
  c.packets = sent.packets;
  c.drops = queue.drops;
  if (delay_line_) {
    const DelayLineStats delay = delay_line_->stats();
    c.lost = delay.lost;
    c.delay_measured = true;
    c.late_packets = delay.late_packets;
    c.worst_late_ms = delay.worst_late_ms;
  }
  return c;
}

}  // namespace st::emu
