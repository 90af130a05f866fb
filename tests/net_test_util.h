#pragma once
// Fixtures shared by the tests of every layer that takes a network
// description (net/, sim/, emu/, the training tests on ns-3): links, the
// two-cluster topology most tests use, and reading a results file. No ns-3,
// no LibTorch.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "net/topology_config.h"
#include "traces/trace.h"

namespace st::net::testing {

inline WanDirection constant_link(double mbps, double delay_ms = 20, double buffer_bdp = 1.0) {
  WanDirection direction;
  direction.constant_mbps = mbps;
  direction.delay_ms = delay_ms;
  direction.buffer_bdp = buffer_bdp;
  return direction;
}

inline WanDirection traced_link(traces::Trace trace, double delay_ms = 20, double buffer_bdp = 1.0) {
  WanDirection direction;
  direction.trace = std::move(trace);
  direction.delay_ms = delay_ms;
  direction.buffer_bdp = buffer_bdp;
  return direction;
}

// Clusters "a" and "b" with `nodes_a` and `nodes_b` nodes, joined by
// `a_to_b` and `b_to_a` (the same link both ways when one is given).
inline TopologyConfig two_clusters(const WanDirection& a_to_b, const WanDirection& b_to_a, int nodes_a = 1,
                                   int nodes_b = 1) {
  TopologyConfig config;
  config.clusters = {{"a", nodes_a}, {"b", nodes_b}};
  config.wan[{0, 1}] = a_to_b;
  config.wan[{1, 0}] = b_to_a;
  return config;
}
inline TopologyConfig two_clusters(const WanDirection& both_ways, int nodes_a = 1, int nodes_b = 1) {
  return two_clusters(both_ways, both_ways, nodes_a, nodes_b);
}

// A whole file as text ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace st::net::testing
