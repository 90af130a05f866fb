#pragma once
// The sim backend's run configuration as the training tests on ns-3 build
// it: a network (tests/net_test_util.h) priced by the shipped 2-core
// profile unless a test says otherwise.
#include <filesystem>
#include <fstream>
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

// A profile that gives the MLP (cheap to really compute here) the CNN's
// measured forward and backward times from scenarios/profiles/cpu-2core.yaml,
// `slowdown` times slower for a slower device: the exchange then has the
// headline's compute window to fit in. Written into `dir`.
inline std::filesystem::path mlp_at_cnn_pace(const std::filesystem::path& dir, double slowdown = 1.0) {
  std::filesystem::create_directories(dir);
  const auto path = dir / ("mlp-at-cnn-pace-x" + std::to_string(slowdown) + ".yaml");
  std::ofstream(path) << "device: test-cpu\n"
                         "cpu: {gather_ns_per_element: 0.25, compress_ns_per_element: 0.36, optimize_ns_per_index: 1.9}\n"
                         "accelerator: {optimize_dense_ns_per_element: 1.4, compress_gpu_ns_per_element: 112}\n"
                         "models:\n  mlp: {batch: 64, forward_ms: "
                      << 21.877 * slowdown << ", backward_ms: " << 14.353 * slowdown << "}\n";
  return path;
}

}  // namespace st::sim::testing
