#pragma once
// Runs one training: builds the nodes (all in this process over the
// in-process transport, or this process as one node over TCP), runs the
// chosen system on each, evaluates periodically on node 0 and writes the
// results folder.
#include <cstdint>
#include <string>
#include <vector>

#include "core/train/config.h"
#include "core/train/results.h"

namespace st::train {

class Backend;

struct TrainResult {
  std::vector<EvalRecord> evaluations;   // node 0's, in order
  std::vector<uint64_t> checksums;       // per node run in this process, in rank order
  std::vector<std::vector<float>> final_parameters;  // node 0's (or this node's) master copy
  double wall_s = 0;
  double mean_iteration_ms = 0;          // node 0
  double mean_pipeline_ms = 0;
  double mean_compute_ms = 0;            // forward + backward + gather + compress + exchange + optimize
  uint64_t bytes_sent = 0;               // node 0, payload bytes
  // The signal that stopped the run early (runtime::request_stop), 0 when
  // it ran to its end. An interrupted run's manifest says so in its summary.
  int interrupted_by = 0;
};

// A stop request (core/runtime/stop_request.h) ends the run at the next task
// boundary: the network and workers stop, the results written so far stay,
// and the summary records the interruption (no final evaluation).
// Throws on bad configuration (naming the field), missing datasets (naming
// the file and package), transport failures (naming the peer).
// `backend` (optional, e.g. the ns-3 one from sim/) supplies the executor
// and one transport per node; all nodes then run in this process.
TrainResult run_training(const TrainConfig& config, Backend* backend = nullptr);

}  // namespace st::train
