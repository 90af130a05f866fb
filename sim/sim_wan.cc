#include "sim/sim_wan.h"

#include <stdexcept>

#include "sim/flow/flow_network.h"
#include "sim/sim_network.h"

namespace st::sim {

std::unique_ptr<SimWan> make_sim_wan(const net::TopologyConfig& config) {
  switch (config.model) {
    case net::NetworkModel::packet:
      return std::make_unique<SimNetwork>(config);
    case net::NetworkModel::flow:
      return std::make_unique<flow::FlowNetwork>(config);
  }
  throw std::logic_error("make_sim_wan: a network model without a network");
}

}  // namespace st::sim
