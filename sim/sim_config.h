#pragma once
// The small YAML file behind `stellatrain train --backend sim --sim-config
// FILE`: the topology (clusters, LAN, WAN per direction with a trace, a
// generator or a constant rate; read by net/links_yaml.h, shared with every
// backend), the compute-time model and the executor's options (sim only).
// docs/sim.md shows the format; scenario files (scenarios/) embed the same
// sections. Errors name the file, the key path and the line.
#include <memory>
#include <string>
#include <vector>

#include "core/train/config.h"

#include "core/util/yaml_fields.h"
#include "sim/compute_model.h"
#include "sim/sim_executor.h"
#include "sim/sim_network.h"

namespace st::sim {

// What only the sim backend needs besides the network description: how
// compute tasks are priced and the executor's options (a scenario's
// `compute:` section).
struct SimComputeSettings {
  ComputeModelConfig compute;  // model and batch are filled from the training config later
  SimExecutorOptions executor;
};

// One sim run's world: the network and how compute is priced.
struct SimRunConfig {
  std::string source;  // the file it came from
  TopologyConfig topology;
  SimComputeSettings compute;
};

// A scenario cluster as the compute model sees it (apps/scenario.h has the
// rest of a cluster).
struct ClusterPricing {
  std::string device;   // "" when not given
  std::string profile;  // resolved; "" when not given
  double tflops = 0;    // analytic model: this cluster's GPU rate (0: compute.tflops)
  int nodes = 1;
};

// A scenario's `compute:` section (`top` is the whole scenario) with its
// clusters' own profiles or rates: every node is priced by its cluster's
// (nodes are numbered cluster by cluster, as in the network). The model is
// loaded for `training` now, so a profile without its entry fails here.
// Errors name the file, the key path and the line.
std::shared_ptr<const SimComputeSettings> parse_scenario_compute(const util::YamlField& top,
                                                              const std::vector<ClusterPricing>& clusters,
                                                              const train::TrainConfig& training,
                                                              const std::string& base_dir);

SimRunConfig load_sim_config(const std::string& path);
// The same from YAML already read (`top.file()` names it in errors);
// relative paths resolve against `base_dir`. The fuzz targets use it.
SimRunConfig parse_sim_config(const util::YamlField& top, const std::string& base_dir);
// `default_profile` (already resolved) is the profile file when the section
// has no `profile` key (a scenario's clusters may name it).
void parse_compute(const util::YamlField& field, ComputeModelConfig& compute, SimExecutorOptions& executor,
                   const std::string& base_dir, const std::string& default_profile = "");

}  // namespace st::sim
