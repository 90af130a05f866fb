#pragma once
// The simulated WAN testbed (DESIGN.md, seams 2 and 3, ns-3 side): clusters
// of engine nodes behind one router each, routers joined pairwise by WAN
// links whose two directions replay their own bandwidth trace, and one
// Ns3Transport per engine node. docs/sim-network.md describes the model, the
// MTU choice, the replay and the recorder.
//
//   node 0 --LAN--+                       +--LAN-- node 2
//                 router a ==== WAN ==== router b
//   node 1 --LAN--+    (a->b, b->a)       +--LAN-- node 3
//
// Engine nodes are numbered cluster by cluster. Everything runs on the one
// ns-3 thread, in simulated time; no ns-3 header is included here.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/comm/transport.h"
#include "sim/link_recorder.h"
#include "traces/trace.h"

namespace st::sim {

class Ns3Transport;

// One direction of a WAN link (cluster `from` -> cluster `to`).
struct WanDirection {
  traces::Trace trace;       // replayed from network time 0, looping
  double constant_mbps = 0;  // used when `trace` is empty
  double delay_ms = 20;      // one-way propagation delay (see docs: shared by both directions)
  double buffer_bytes = 0;   // bottleneck drop-tail queue; 0: buffer_bdp x max rate x RTT
  double buffer_bdp = 1.0;
  std::string tcp = "cubic";  // congestion control of the senders in `from` towards `to`
};

struct ClusterSpec {
  std::string name;  // names the links in link.csv ("a->b"): non-empty, unique, no ',' or '"'
  int nodes = 1;
};

struct TopologyConfig {
  std::vector<ClusterSpec> clusters;
  double lan_mbps = 10000;
  double lan_delay_ms = 0.05;
  std::string lan_tcp = "cubic";  // between nodes of one cluster
  // Key: cluster indices (from, to). Every ordered pair of distinct clusters
  // needs an entry; a missing one is an error naming it.
  std::map<std::pair<int, int>, WanDirection> wan;
  int mtu = 0;  // bytes, the same on every link; 0: chosen automatically (choose_mtu)
  // choose_mtu keeps (BDP + buffer) / segment at or below this many packets:
  // ns-3's TCP costs CPU time per packet and per packet in flight.
  int target_packets_in_flight = 1000;
  uint64_t seed = 1;  // ns-3's RngSeedManager (per-step loss draws)
};

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
// missing direction) and derives the plan. Pure; no simulation is touched.
NetworkPlan plan_network(const TopologyConfig& config);

// The automatic MTU: the smallest one in [1500, 65535] that keeps
// worst_in_flight_bytes / (mtu - 52) <= target_packets.
int choose_mtu(double worst_in_flight_bytes, int target_packets);

// ns-3's TypeId name for a congestion control given by its short name
// ("cubic" -> "ns3::TcpCubic"); throws std::invalid_argument listing the
// known names.
std::string ns3_tcp_type_name(const std::string& tcp);

class SimNetwork {
 public:
  // Builds the ns-3 topology at the current simulated time (network time 0;
  // normally simulated time 0) and opens one TCP connection per ordered pair
  // of engine nodes (established in simulated time from there). One
  // SimNetwork per simulation: it resets ns-3's global address allocator and
  // populates global routing. Throws std::invalid_argument for a bad config.
  explicit SimNetwork(const TopologyConfig& config);
  // Detaches every callback into this object; call before or after
  // Simulator::Destroy(), never from inside an ns-3 event.
  ~SimNetwork();
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;

  int world_size() const;
  int cluster_of(int node) const;
  comm::Transport& transport(int node);
  Ns3Transport& ns3_transport(int node);

  const NetworkPlan& plan() const;
  int mtu() const { return plan().mtu; }
  int segment_bytes() const { return plan().segment_bytes; }

  // Network time (seconds since construction).
  double now_s() const;

  const LinkRecorder& recorder() const;
  // link.csv up to now_s().
  void write_link_csv(const std::string& path) const;
  std::vector<LinkTotals> wan_totals() const;

  // Trace replay schedules the next rate change forever (traces loop), so
  // Simulator::Run() returns only after Simulator::Stop() -- or after this,
  // which cancels the pending replay events (the links keep their current
  // rate). Used to let a simulation run until it is idle.
  void stop_replay();

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::sim
