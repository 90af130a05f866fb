#pragma once
// Where a training run's nodes live when they are not real processes: a
// backend supplies the executor (its clock) and one transport per node, and
// adds what it knows to the results folder. The ns-3 backend (sim/)
// implements it; the trainer itself only knows this interface, so core/
// stays free of ns-3 (the seams of docs/architecture.md).
#include <nlohmann/json.hpp>

#include <string>

#include "core/comm/transport.h"
#include "core/runtime/executor.h"

namespace st::train {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // e.g. "sim"
  virtual int nodes() const = 0;         // must equal the config's nodes
  virtual runtime::Executor& executor() = 0;
  virtual comm::Transport& transport(int node) = 0;
  // Merged into manifest.json (topology, compute-time model, MTU, ...).
  virtual nlohmann::json manifest() const = 0;
  // Called once training has finished: writes backend files (link.csv)
  // into `dir` (may be empty: no folder) and returns summary fields (e.g.
  // WAN bytes) for the manifest's summary.
  virtual nlohmann::json finish(const std::string& dir) = 0;
  // Host (wall-clock) cost of the run, kept out of the deterministic
  // results files: printed, and written to host_cost.json.
  virtual nlohmann::json host_cost() const { return nlohmann::json::object(); }
};

}  // namespace st::train
