#pragma once
// The nodes of a training that live in this process, and their clock: the
// real backend's thread pool with the in-process or TCP transport
// (real_backend.h) and the sim backend's ns-3 world (sim/sim_backend.h).
// run_training (trainer.h) builds a node on each local rank and drives the
// system there; what differs between hosts is only what this interface
// says.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/comm/transport.h"
#include "core/runtime/executor.h"

namespace st::train {

class NodeHost {
 public:
  virtual ~NodeHost() = default;
  virtual std::string name() const = 0;  // the backend: real, sim
  // Nodes in the whole run, and those that run in this process (a TCP
  // process is one rank of several).
  virtual int world_size() const = 0;
  virtual std::vector<int> local_ranks() const = 0;
  bool all_ranks_here() const { return static_cast<int>(local_ranks().size()) == world_size(); }
  virtual runtime::Executor& executor() = 0;
  virtual comm::Transport& transport(int rank) = 0;
  // True when the executor's clock is the wall clock (the summary then also
  // records wall_s; simulated runs keep host times out of the results).
  virtual bool wall_clock() const = 0;
  // Merged into manifest.json: backend, transport, compute-time model, and
  // the network when there is one.
  virtual nlohmann::json manifest() const = 0;
  // Once training has finished: writes the host's own files (link.csv)
  // into `dir` (may be empty: no folder) and returns summary fields (e.g.
  // WAN bytes).
  virtual nlohmann::json finish(const std::string& dir) = 0;
  // Host (wall-clock) cost of a simulated run, kept out of the
  // deterministic results files: printed, and written to host_cost.json.
  virtual nlohmann::json host_cost() const { return nlohmann::json::object(); }
  // Stops every source of callbacks before the nodes go away: the network
  // first, then the executor's threads (queued tasks are dropped).
  virtual void stop() = 0;
};

}  // namespace st::train
