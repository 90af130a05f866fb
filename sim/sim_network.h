#pragma once
// The simulated WAN testbed (the transport and link-shaping seams, ns-3
// side; emu/emu_network.h is its twin): the network description of
// net/topology_config.h, planned by sim_plan.h, built as ns-3 nodes and
// point-to-point links whose two directions replay their own bandwidth
// trace (link_replay.h), and one Ns3Transport per engine node.
// docs/sim-network.md describes the model, the MTU choice, the replay and
// the recorder.
//
//   node 0 --LAN--+                       +--LAN-- node 2
//                 router a ==== WAN ==== router b
//   node 1 --LAN--+    (a->b, b->a)       +--LAN-- node 3
//
// Engine nodes are numbered cluster by cluster. Everything runs on the one
// ns-3 thread, in simulated time; no ns-3 header is included here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/transport.h"
#include "net/link_recorder.h"
#include "net/network_plan.h"
#include "net/topology_config.h"
#include "sim/sim_plan.h"
#include "sim/sim_wan.h"

namespace st::sim {

class Ns3Transport;

// The network description is backend-neutral (net/); sim/ uses its names.
using net::ClusterSpec;
using net::LinkRecorder;
using net::LinkSecond;
using net::LinkTotals;
using net::NetworkPlan;
using net::RateSchedule;
using net::TopologyConfig;
using net::WanDirection;
using net::WanDirectionPlan;
using net::choose_mtu;

class SimNetwork final : public SimWan {
 public:
  // Builds the ns-3 topology at the current simulated time (network time 0;
  // normally simulated time 0) and opens one TCP connection per ordered pair
  // of engine nodes (established in simulated time from there). One
  // SimNetwork per simulation: it resets ns-3's global address allocator and
  // populates global routing. Throws std::invalid_argument for a bad config.
  explicit SimNetwork(const TopologyConfig& config);
  // Detaches every callback into this object; call before or after
  // Simulator::Destroy(), never from inside an ns-3 event.
  ~SimNetwork() override;
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;

  net::NetworkModel model() const override { return net::NetworkModel::packet; }
  int world_size() const override;
  int cluster_of(int node) const;
  comm::Transport& transport(int node) override;
  Ns3Transport& ns3_transport(int node);

  const NetworkPlan& plan() const override;  // the neutral part of the SimNetworkPlan it was built from
  int mtu() const { return plan().mtu; }
  int segment_bytes() const { return plan().segment_bytes; }

  // Network time (seconds since construction).
  double now_s() const override;

  const LinkRecorder& recorder() const;
  // link.csv up to now_s().
  void write_link_csv(const std::string& path) const override;
  std::vector<LinkTotals> wan_totals() const override;

  // Trace replay schedules the next rate change forever (traces loop), so
  // Simulator::Run() returns only after Simulator::Stop() -- or after this,
  // which cancels the pending replay events (the links keep their current
  // rate). Used to let a simulation run until it is idle.
  void stop_replay() override;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::sim
