#pragma once
// The simulated network of one run, as the sim backend sees it: one
// Transport per engine node and the WAN's replay and record, whichever
// model carries the bytes (TopologyConfig::model). Two implementations:
// SimNetwork (sim/sim_network.h: ns-3's packets and TCP, the reference) and
// FlowNetwork (sim/flow/flow_network.h: the flow-level model). Both run on
// ns-3's event loop, in simulated time, on the one simulator thread.
#include <memory>
#include <string>
#include <vector>

#include "core/comm/transport.h"
#include "net/link_recorder.h"
#include "net/network_plan.h"
#include "net/topology_config.h"

namespace st::sim {

class SimWan {
 public:
  virtual ~SimWan() = default;
  virtual net::NetworkModel model() const = 0;
  virtual int world_size() const = 0;
  virtual comm::Transport& transport(int node) = 0;
  virtual const net::NetworkPlan& plan() const = 0;
  // Network time (seconds since construction).
  virtual double now_s() const = 0;
  // link.csv up to now_s().
  virtual void write_link_csv(const std::string& path) const = 0;
  virtual std::vector<net::LinkTotals> wan_totals() const = 0;
  // Cancels the pending trace replay events (traces loop forever), so a
  // simulation can run until it is idle.
  virtual void stop_replay() = 0;
};

// The network TopologyConfig::model names, built at the current simulated
// time. Throws std::invalid_argument for a bad config.
std::unique_ptr<SimWan> make_sim_wan(const net::TopologyConfig& config);

}  // namespace st::sim
