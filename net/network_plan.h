#pragma once
// Validation of a TopologyConfig and the sizes every backend derives from it
// (bandwidth-delay products, bottleneck buffers, MTU, socket buffers). Pure:
// no simulation, no kernel is touched. Backend-specific rules (ns-3's one
// delay per point-to-point link, the kernel's congestion controls) are
// checked by the backends themselves.
#include <cstdint>
#include <string>
#include <vector>

#include "net/topology_config.h"

namespace st::net {

// Sizes derived from a validated config.
struct WanDirectionPlan {
  int from = 0, to = 0;
  std::string name;         // "a->b"
  double max_mbps = 0;      // over the trace (or the constant)
  double delay_ms = 0;      // the largest one-way delay it can have
  double rtt_s = 0;         // 2 x (WAN + 2 LAN delays)
  double bdp_bytes = 0;     // max_mbps x rtt
  double buffer_bytes = 0;  // the drop-tail limit, at least two full packets
};

struct NetworkPlan {
  int mtu = 0;            // IP MTU of every device
  int segment_bytes = 0;  // TCP payload per segment: mtu - 52 (IP 20, TCP 20, timestamps 12)
  bool mtu_automatic = false;
  double packets_in_flight = 0;  // worst direction's (BDP + buffer) / segment
  uint32_t socket_buffer_bytes = 0;  // max(64 MiB, 4 x largest BDP)
  std::vector<WanDirectionPlan> directions;  // sorted by (from, to)
};

// Checks the config (throws std::invalid_argument naming the field or the
// missing direction) and derives the plan. With `config.mtu == 0` the MTU is
// choose_mtu's (the ns-3 backend's rule); a backend with another rule sets
// `mtu` before planning.
NetworkPlan plan_network(const TopologyConfig& config);

// The automatic MTU: the smallest one in [1500, 65535] that keeps
// worst_in_flight_bytes / (mtu - 52) <= target_packets.
int choose_mtu(double worst_in_flight_bytes, int target_packets);

// Congestion controls a scenario may name (ns-3's set; each backend maps
// them to what it has). Throws std::invalid_argument listing them.
void check_tcp_name(const std::string& tcp);
const std::vector<std::string>& tcp_names();

// True when some step of the trace sets its own delay.
bool has_step_delays(const traces::Trace& trace);

// The longest stretch at 0 Mbps in one loop of `direction`'s schedule
// (a loop's last and first steps join when both are outages), in seconds.
double longest_outage_s(const WanDirection& direction);

}  // namespace st::net
