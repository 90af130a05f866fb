#pragma once
// What the ns-3 backend builds for one run, derived from the backend-neutral
// network description as emu/emu_plan.h derives the emulator's: the neutral
// plan (net/network_plan.h) plus ns-3's own names and rules. A
// point-to-point link has one delay for both directions (so wan[a->b]
// .delay_ms must equal wan[b->a].delay_ms, and per-step delays may come from
// one direction's trace only), and every congestion control must have an
// ns-3 TypeId. No ns-3 header here, so the rules are testable alone.
#include <map>
#include <string>
#include <utility>

#include "net/network_plan.h"
#include "net/topology_config.h"

namespace st::sim {

// The ns-3 TCP timers that decide whether a sender times out. ns-3 sets a
// retransmission timeout to max(MinRto, srtt + max(ClockGranularity,
// 4 rttvar)); its defaults, MinRto 1 s and ClockGranularity 1 ms, make that
// max(1 s, srtt + 4 rttvar). Linux's rto_min r puts the timeout at srtt +
// at least r: both attributes set to r give that rule. Linux also ACKs a
// lone segment after its delayed-ACK timer, which starts at 40 ms
// (TCP_ATO_MIN); ns-3 waits DelAckTimeout, 200 ms. With a timeout of srtt +
// 200 ms, ns-3's delayed ACK arrives as the timer fires: a window of one
// segment times out, retransmits and stays at one segment, for good
// (docs/sim-network.md "Retransmission timeout"). So Linux's rule comes
// with Linux's delayed-ACK timer.
struct Ns3TcpTimers {
  double min_rto_s = 1.0;
  double clock_granularity_s = 0.001;
  double delayed_ack_timeout_s = 0.2;
};

struct SimNetworkPlan {
  net::NetworkPlan network;
  std::string lan_tcp_type;  // ns-3 TypeId name, e.g. "ns3::TcpCubic"
  std::map<std::pair<int, int>, std::string> wan_tcp_types;  // by (from, to) cluster
  std::map<std::pair<int, int>, std::string> wan_names;      // "a->b" (net::direction_name)
  Ns3TcpTimers timers;
};

// Linux's rule and delayed-ACK timer with links.rto_min_ms as rto_min, or
// ns-3's defaults when it is not given.
Ns3TcpTimers ns3_tcp_timers(const net::TopologyConfig& config);

// net::plan_network plus the rules above. Throws std::invalid_argument
// naming the field.
SimNetworkPlan plan_sim_network(const net::TopologyConfig& config);

// ns-3's TypeId name for a congestion control given by its short name
// ("cubic" -> "ns3::TcpCubic"); throws std::invalid_argument listing the
// known names.
std::string ns3_tcp_type_name(const std::string& tcp);

}  // namespace st::sim
