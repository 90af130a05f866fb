#pragma once
// Runs one training on the nodes a host has in this process (node_host.h):
// builds each node (workers, master copy, collectives, the system), runs
// the chosen system on each, evaluates periodically on node 0 and writes
// the results folder.
#include <cstdint>
#include <string>
#include <vector>

#include "core/train/config.h"
#include "core/train/run/results.h"

namespace st::train {

class NodeHost;

struct TrainResult {
  std::vector<EvalRecord> evaluations;   // node 0's, in order
  std::vector<uint64_t> checksums;       // per node run in this process, in rank order
  std::vector<std::vector<float>> final_parameters;  // node 0's (or this node's) master copy
  double wall_s = 0;
  double mean_iteration_ms = 0;          // node 0
  double mean_pipeline_ms = 0;
  double mean_compute_ms = 0;            // load + forward + backward + gather + compress + exchange + optimize
  uint64_t bytes_sent = 0;               // node 0, payload bytes
  // The signal that stopped the run early (runtime::request_stop), 0 when
  // it ran to its end. An interrupted run's manifest says so in its summary.
  int interrupted_by = 0;
  // The host's wall-clock cost of a simulated run (NodeHost::host_cost).
  nlohmann::json host_cost = nlohmann::json::object();
};

// A stop request (core/runtime/stop_request.h) ends the run at the next task
// boundary: the network and workers stop, the results written so far stay,
// and the summary records the interruption (no final evaluation).
// Throws on bad configuration (naming the field), missing datasets (naming
// the file and package), transport failures (naming the peer).
TrainResult run_training(const TrainConfig& config, NodeHost& host);

}  // namespace st::train
