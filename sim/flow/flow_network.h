#pragma once
// The flow-level twin of SimNetwork (links.model: flow; docs/sim-flow.md):
// the same network description, plan, trace replay (net/schedule_walker.h
// on the simulator's clock), link.csv and totals, with the bytes carried
// by sim/flow/flow_model.h instead of ns-3's packets and TCP.
//
//   host i --LAN up[i]--> router a --WAN a->b--> router b --LAN down[j]--> host j
//
// Each host has a LAN link each way; each ordered pair of clusters a WAN
// direction. A connection's ACKs take the reverse path. Everything runs on
// ns-3's event loop (the sim executor's), in simulated time.
#include <memory>
#include <string>
#include <vector>

#include "sim/sim_plan.h"
#include "sim/sim_wan.h"

namespace st::sim::flow {

struct TcpConstants;

// The model's constants for a plan: ns-3 3.37's TCP with the plan's segment
// and socket buffer sizes and retransmission timeout rule.
TcpConstants ns3_tcp_constants(const SimNetworkPlan& plan);

class FlowNetwork final : public SimWan {
 public:
  explicit FlowNetwork(const net::TopologyConfig& config);
  ~FlowNetwork() override;
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  net::NetworkModel model() const override { return net::NetworkModel::flow; }
  int world_size() const override;
  comm::Transport& transport(int node) override;
  const net::NetworkPlan& plan() const override;
  double now_s() const override;
  void write_link_csv(const std::string& path) const override;
  std::vector<net::LinkTotals> wan_totals() const override;
  void stop_replay() override;

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::sim::flow
