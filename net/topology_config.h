#pragma once
// The network of an experiment, described once for every backend (docs/
// architecture.md): clusters of engine nodes behind one router each, a LAN
// inside each cluster, and one WAN direction per ordered pair of clusters
// whose rate follows a trace (or a constant), with a one-way delay, an
// optional per-step loss and a bottleneck buffer.
//
//   node 0 --LAN--+                       +--LAN-- node 2
//                 router a ==== WAN ==== router b
//   node 1 --LAN--+    (a->b, b->a)       +--LAN-- node 3
//
// Engine nodes are numbered cluster by cluster. sim/ builds ns-3 devices
// from it, emu/ network namespaces, veth pairs and qdiscs. Plain data: the
// rules are in network_plan.h, the YAML form in links_yaml.h.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/trace.h"

namespace st::net {

// How the sim backend carries the traffic (links.model): ns-3's packets and
// TCP (the reference), or the flow-level model of sim/flow/flow_model.h
// (docs/sim-flow.md). The emulator carries real packets: packet only.
enum class NetworkModel { packet, flow };

inline const char* network_model_name(NetworkModel model) {
  return model == NetworkModel::flow ? "flow" : "packet";
}
// The names links.model and `run --network` take.
inline const std::vector<std::string>& network_model_names() {
  static const std::vector<std::string> names = {"packet", "flow"};
  return names;
}
// std::nullopt for a name that is not one.
inline std::optional<NetworkModel> network_model_from_name(const std::string& name) {
  if (name == "packet") return NetworkModel::packet;
  if (name == "flow") return NetworkModel::flow;
  return std::nullopt;
}

// One direction of a WAN link (cluster `from` -> cluster `to`).
struct WanDirection {
  traces::Trace trace;       // replayed from network time 0, looping
  double constant_mbps = 0;  // used when `trace` is empty
  double delay_ms = 20;      // one-way propagation delay
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
  int mtu = 0;  // bytes, the same on every link; 0: chosen by the backend (sim: choose_mtu; emu: 1500)
  // choose_mtu keeps (BDP + buffer) / segment at or below this many packets:
  // ns-3's TCP costs CPU time per packet and per packet in flight.
  int target_packets_in_flight = 1000;
  uint64_t seed = 1;  // random streams of per-step loss draws
  // Linux's rto_min for every TCP sender (links.rto_min_ms): a
  // retransmission timeout is at least the smoothed RTT plus this (ns-3
  // takes Linux's 40 ms delayed-ACK timer with it). 0: each backend keeps
  // its own rule, and they differ: ns-3 (and the flow model) max(1 s, srtt +
  // 4 rttvar), Linux srtt + at least 200 ms (docs/sim-network.md
  // "Retransmission timeout").
  int rto_min_ms = 0;
  // Where the replay starts: network time 0 replays trace time
  // trace_offset_s of every direction's trace (each loops on its own). A
  // run sets it from its seed (apps/scenario.h), the same for every system.
  double trace_offset_s = 0;
  NetworkModel model = NetworkModel::packet;  // links.model

  int total_nodes() const {
    int total = 0;
    for (const auto& cluster : clusters) total += cluster.nodes;
    return total;
  }
};

// The cluster of each engine node (nodes are numbered cluster by cluster).
inline std::vector<int> cluster_of_each_node(const TopologyConfig& config) {
  std::vector<int> cluster_of;
  for (std::size_t c = 0; c < config.clusters.size(); ++c)
    for (int i = 0; i < config.clusters[c].nodes; ++i) cluster_of.push_back(static_cast<int>(c));
  return cluster_of;
}

// "a->b" from the clusters' names.
inline std::string direction_name(const TopologyConfig& config, int from, int to) {
  return config.clusters.at(static_cast<std::size_t>(from)).name + "->" +
         config.clusters.at(static_cast<std::size_t>(to)).name;
}

}  // namespace st::net
