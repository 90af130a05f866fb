#include "sim/sim_wan.h"

#include <fmt/format.h>

#include <stdexcept>

#include "sim/flow/flow_network.h"
#include "sim/sim_network.h"

namespace st::sim {

std::unique_ptr<SimWan> make_sim_wan(const net::TopologyConfig& config) {
  if (config.model == "packet") return std::make_unique<SimNetwork>(config);
  if (config.model == "flow") return std::make_unique<flow::FlowNetwork>(config);
  throw std::invalid_argument(
      fmt::format("links.model: '{}' is not a network model (give packet or flow)", config.model));
}

}  // namespace st::sim
