#pragma once
// The sim backend's run configuration as the training tests on ns-3 build
// it: a network (tests/net_test_util.h) priced by the shipped 2-core
// profile unless a test says otherwise.
#include <string>

#include "sim/sim_config.h"
#include "tests/net_test_util.h"

namespace st::sim::testing {

inline std::string cpu_2core_profile() { return std::string(ST_SOURCE_DIR) + "/scenarios/profiles/cpu-2core.yaml"; }

inline SimRunConfig sim_run(net::TopologyConfig network, const std::string& compute_model = "profile",
                            const std::string& profile = cpu_2core_profile()) {
  SimRunConfig c;
  c.source = "<test>";
  c.topology = std::move(network);
  c.compute.compute.kind = compute_model;
  c.compute.compute.profile_path = profile;
  return c;
}

}  // namespace st::sim::testing
