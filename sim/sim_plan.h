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

struct SimNetworkPlan {
  net::NetworkPlan network;
  std::string lan_tcp_type;  // ns-3 TypeId name, e.g. "ns3::TcpCubic"
  std::map<std::pair<int, int>, std::string> wan_tcp_types;  // by (from, to) cluster
  std::map<std::pair<int, int>, std::string> wan_names;      // "a->b" (net::direction_name)
};

// net::plan_network plus the rules above. Throws std::invalid_argument
// naming the field.
SimNetworkPlan plan_sim_network(const net::TopologyConfig& config);

// ns-3's TypeId name for a congestion control given by its short name
// ("cubic" -> "ns3::TcpCubic"); throws std::invalid_argument listing the
// known names.
std::string ns3_tcp_type_name(const std::string& tcp);

}  // namespace st::sim
