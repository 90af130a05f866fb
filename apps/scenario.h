#pragma once
// A scenario file: one experiment in YAML (clusters, links, compute-time
// model, model and data, optimizer, batch, the systems to compare, the
// target accuracy and the budget). `stellatrain run` runs it; the format is
// in docs/scenarios.md. Parsing is strict: unknown keys and bad values are
// errors naming the file, the key path and the line (util::YamlError).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/train/config.h"
#include "core/util/yaml_fields.h"
#include "net/topology_config.h"

namespace st::sim {
struct SimComputeSettings;
}

namespace st::apps {

struct ScenarioCluster {
  std::string name;
  int nodes = 1;
  int gpus_per_node = 1;
  std::string device;        // a name for reports ("" when not given)
  std::string profile;       // compute profile file, resolved ("" when not given)
  double tflops = 0;         // analytic compute model: this cluster's GPU rate (0: compute.tflops)
  double cost_per_hour = 0;  // per node
  double gpu_hour = 0;       // per GPU-hour
  double egress_per_gb = 0;  // per GB this cluster sends over the WAN

  double hourly() const { return nodes * (cost_per_hour + gpus_per_node * gpu_hour); }
};

struct ScenarioSystem {
  std::string label;          // unique; names the system's results folder
  train::TrainConfig config;  // everything but seed and out_dir, which the runner sets per run
};

struct Scenario {
  std::string source;  // the file it came from
  std::string name;    // `name:`, or the file name without .yaml
  std::string description;
  std::string backend = "sim";  // sim, real or emu (`--backend` overrides)
  std::vector<ScenarioCluster> clusters;
  std::vector<ScenarioSystem> systems;
  std::vector<uint64_t> seeds = {1};
  double target_accuracy = 0;  // a fraction in (0, 1]
  // Every target summary.json reports TTA and speedups at (`report_targets`),
  // ascending, target_accuracy among them.
  std::vector<double> report_targets;
  // The network (clusters and `links`): one description for every backend.
  // Its trace_offset_s is per run: trace_offset_for(seed).
  net::TopologyConfig network;
  // `links.trace_offset`: seconds every seed starts the replay at, or none
  // (`auto`, the default) for an offset drawn from each seed.
  std::optional<double> trace_offset_s;
  // The sim backend's compute-time model and executor options (`compute`).
  // Null in builds without ns-3 (the section is then not checked).
  std::shared_ptr<const sim::SimComputeSettings> sim_compute;

  int total_nodes() const;
  // Where a seed's runs start replaying the traces: the same for every
  // system of the seed (paired runs see the same network). `auto`: a draw
  // from the seed, uniform over the longest trace's loop, to the
  // millisecond; 0 when every link is constant.
  double trace_offset_for(uint64_t seed) const;
  double cost_per_hour() const;  // all clusters' nodes together
};

// `run --systems` and `sweep --systems`: the scenario's systems with these
// labels, in the scenario's order (all of them when `labels` is empty).
// Throws std::invalid_argument naming a label the scenario does not have.
std::vector<ScenarioSystem> systems_labelled(const Scenario& scenario, const std::vector<std::string>& labels);

// Throws util::YamlError naming the file, key path and line.
Scenario load_scenario(const std::string& path);
// The same from YAML already read (`top.file()` names it in errors);
// relative paths in it resolve against `base_dir`. The fuzz targets use it.
Scenario parse_scenario(const util::YamlField& top, const std::string& base_dir);

}  // namespace st::apps
