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

// ns-3 sets a retransmission timeout to max(MinRto, srtt +
// max(ClockGranularity, 4 rttvar)). Its defaults, MinRto 1 s and
// ClockGranularity 1 ms, make that max(1 s, srtt + 4 rttvar). Linux's
// rto_min r instead puts the timeout at srtt + at least r: both attributes
// set to r give that rule. MinRto = r alone would not: on a 40 ms path it
// pins the timeout at r, which ns-3's 200 ms delayed ACK then outlasts
// whenever the window is one segment, and every such ACK comes after a
// spurious timeout that keeps the window at one segment (docs/sim-network.md
// "Retransmission timeout").
struct Ns3RtoRule {
  double min_rto_s = 1.0;
  double clock_granularity_s = 0.001;
};
struct SimNetworkPlan {
  net::NetworkPlan network;
  std::string lan_tcp_type;  // ns-3 TypeId name, e.g. "ns3::TcpCubic"
  std::map<std::pair<int, int>, std::string> wan_tcp_types;  // by (from, to) cluster
  std::map<std::pair<int, int>, std::string> wan_names;      // "a->b" (net::direction_name)
  Ns3RtoRule rto;
};

// links.rto_min_ms as that rule, or ns-3's defaults when it is not given.
Ns3RtoRule ns3_rto_rule(const net::TopologyConfig& config);

// net::plan_network plus the rules above. Throws std::invalid_argument
// naming the field.
SimNetworkPlan plan_sim_network(const net::TopologyConfig& config);

// ns-3's TypeId name for a congestion control given by its short name
// ("cubic" -> "ns3::TcpCubic"); throws std::invalid_argument listing the
// known names.
std::string ns3_tcp_type_name(const std::string& tcp);

}  // namespace st::sim
