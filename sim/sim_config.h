#pragma once
// The small YAML file behind `stellatrain train --backend sim --sim-config
// FILE`: the topology (clusters, LAN, WAN per direction with a trace, a
// generator or a constant rate), the compute-time model and the executor's
// options. docs/sim.md shows the format; scenario files (scenarios/) embed
// the same sections. Errors name the file, the key path and the line.
#include <string>

#include "core/util/yaml_fields.h"
#include "sim/compute_model.h"
#include "sim/sim_executor.h"
#include "sim/topology.h"

namespace st::sim {

struct SimRunConfig {
  std::string source;  // the file it came from
  TopologyConfig topology;
  ComputeModelConfig compute;  // model and batch are filled from the training config later
  SimExecutorOptions executor;
};

SimRunConfig load_sim_config(const std::string& path);

// The sections on their own, for scenario files. Relative trace paths are
// resolved against `base_dir` (the directory of the file they appear in).
TopologyConfig parse_topology(const util::YamlField& top, const std::string& base_dir);
// The link half of parse_topology: lan, wan, mtu and seed read from `links`
// (for clusters already in `topology`). It does not check `links` for
// unknown keys; its caller knows which keys sit beside them.
void parse_links(const util::YamlField& links, TopologyConfig& topology, const std::string& base_dir);
WanDirection parse_wan_direction(const util::YamlField& field, const std::string& base_dir);
// `default_profile` (already resolved) is the profile file when the section
// has no `profile` key (a scenario's clusters may name it).
void parse_compute(const util::YamlField& field, ComputeModelConfig& compute, SimExecutorOptions& executor,
                   const std::string& base_dir, const std::string& default_profile = "");

}  // namespace st::sim
