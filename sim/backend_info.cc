#include "sim/backend_info.h"

#include <ns3/core-module.h>

namespace st::sim {

std::string backend_info() {
  ns3::Simulator::Stop(ns3::Seconds(1.0));
  ns3::Simulator::Run();
  const double end_s = ns3::Simulator::Now().GetSeconds();
  ns3::Simulator::Destroy();
  return "ns-3 3.37 (empty simulation ran to " + std::to_string(end_s) + " s)";
}

}  // namespace st::sim
