#pragma once
// A scenario file: one experiment in YAML (clusters, links, compute-time
// model, model and data, optimizer, batch, the systems to compare, the
// target accuracy and the budget). `stellatrain run` runs it; the format is
// in docs/scenarios.md. Parsing is strict: unknown keys and bad values are
// errors naming the file, the key path and the line (util::YamlError).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/train/config.h"

namespace st::sim {
struct SimRunConfig;
}

namespace st::apps {

struct ScenarioCluster {
  std::string name;
  int nodes = 1;
  int gpus_per_node = 1;
  std::string device;        // a name for reports ("" when not given)
  std::string profile;       // compute profile file, resolved ("" when not given)
  double cost_per_hour = 0;  // per node
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
  // The ns-3 topology and compute-time model. Null in builds without ns-3
  // (their `links` and `compute` sections are then not checked).
  std::shared_ptr<const sim::SimRunConfig> sim;

  int total_nodes() const;
  double cost_per_hour() const;  // all clusters' nodes together
};

// Throws util::YamlError naming the file, key path and line.
Scenario load_scenario(const std::string& path);

inline constexpr const char* kBackends[] = {"sim", "real", "emu"};

// Checks that `backend` can run `scenario` (std::invalid_argument naming the
// key otherwise): a known backend that this build has, and systems that run
// on it (ddp-gloo only on real networks).
void check_backend(const Scenario& scenario, const std::string& backend);

}  // namespace st::apps
