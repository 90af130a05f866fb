#pragma once
// What the emulator builds for one run, derived from the backend-neutral
// network description (net/topology_config.h): names, addresses, routes and
// shaping parameters. Pure: nothing here touches the kernel, so the naming
// scheme and the rules are testable without privileges (docs/emu.md).
//
//   node ns st-<id>-n0          router ns st-<id>-r0             router ns st-<id>-r1
//   st-<id>-n0 ==veth== st-<id>-l0 |  st-<id>-w0-1 ==veth==> st-<id>-v0-1  | ...
//                                  |  st-<id>-v1-0 <==veth== st-<id>-w1-0  |
//
// Every object carries the run's prefix "st-<id>-" (id: 4 characters of
// [a-z0-9]), so that leftovers can be found and nothing else is touched.
// Interface names are at most 15 characters (IFNAMSIZ - 1): the prefix is 8,
// leaving 7 for a role letter and indices (n<rank>, l<rank>, w<from>-<to>,
// v<from>-<to>), which is why the emulator takes at most 100 clusters and
// 100,000 nodes.
#include <cstdint>
#include <string>
#include <vector>

#include "net/network_plan.h"
#include "net/rate_schedule.h"
#include "net/topology_config.h"

namespace st::emu {

inline constexpr const char* kPrefix = "st-";
inline constexpr int kRunIdLength = 4;
inline constexpr int kMaxClusters = 100;
inline constexpr int kMaxNodes = 100000;
inline constexpr double kMaxLanDelayMs = 1.0;  // LAN delay is not emulated (see docs/emu.md)
inline constexpr double kMaxWanMbps = 10000;   // the TBF gate's open rate must stay above it

// A fresh random run id (kRunIdLength characters of [a-z0-9]).
std::string make_run_id();
bool is_run_id(const std::string& text);
// "st-<id>-".
std::string run_prefix(const std::string& run_id);
// The run id of a name made by this scheme ("st-ab12-n0" -> "ab12"), or ""
// when the name is not one of ours.
std::string run_id_of(const std::string& name);

struct EmuNode {
  int rank = 0;
  int cluster = 0;
  std::string netns;          // st-<id>-n<rank>
  std::string ifname;         // in netns: st-<id>-n<rank>
  std::string router_ifname;  // in the router's netns: st-<id>-l<rank>
  std::string address;        // 10.<cluster+1>.x.y (the /30 of this node's LAN link)
  std::string router_address;
  std::string tcp;            // the namespace's congestion control (Linux name)
};

struct EmuRouter {
  int cluster = 0;
  std::string name;       // the cluster's name
  std::string netns;      // st-<id>-r<cluster>
  std::string lan_prefix;  // 10.<cluster+1>.0.0/16: every node of the cluster
};

// One WAN direction: its own veth pair from router `from` to router `to`,
// shaped on the sending end and delayed after it.
struct EmuWanDirection {
  int from = 0, to = 0;
  std::string name;           // "a->b"
  std::string out_ifname;     // in router `from`: st-<id>-w<from>-<to> (HTB, TBF gate, bfifo)
  std::string in_ifname;      // in router `to`:   st-<id>-v<from>-<to> (delay line on arrival)
  std::string out_address;    // 100.64.x.y/30
  std::string in_address;
  uint16_t queue_number = 0;  // NFQUEUE number of its delay line (in router `to`)
  net::RateSchedule schedule;
  double max_mbps = 0;
  double buffer_bytes = 0;    // the bottleneck's byte limit (bfifo)
  double delay_ms = 0;        // base one-way delay (a step's own delay replaces it)
  bool has_loss = false;      // some step drops packets
  bool has_step_delays = false;
};

constexpr int kLinuxDefaultRtoMinMs = 200;  // the kernel's TCP_RTO_MIN

struct EmulationPlan {
  std::string run_id;
  std::string prefix;  // st-<id>-
  int mtu = 1500;
  double lan_mbps = 0;
  uint32_t socket_buffer_bytes = 0;  // tcp_rmem/tcp_wmem maximum in every node namespace
  uint64_t seed = 1;                 // loss draws
  int rto_min_ms = 0;                // rto_min on every node's route (links.rto_min_ms); 0: Linux's own
  std::vector<EmuRouter> routers;    // by cluster
  std::vector<EmuNode> nodes;        // by rank
  std::vector<EmuWanDirection> wan;  // sorted by (from, to)
  net::NetworkPlan network;

  std::vector<std::string> namespaces() const;  // routers first, then nodes
};

// Linux's name of a congestion control ("newreno" -> "reno").
std::string linux_tcp_name(const std::string& tcp);

// Validates what the emulator can build and derives the plan. Throws
// std::invalid_argument naming the field: at most kMaxClusters clusters
// and kMaxNodes nodes, LAN delay at most kMaxLanDelayMs (not emulated), WAN
// rates up to kMaxWanMbps, one congestion control per cluster (the Linux
// default is per network namespace). `run_id` empty: a placeholder id (for
// checking a scenario before anything runs).
EmulationPlan plan_emulation(const net::TopologyConfig& config, const std::string& run_id = "");

}  // namespace st::emu
