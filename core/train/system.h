#pragma once
// A training system running on one node (each is described once in the
// registry, system_registry.h, which builds it). Systems are written once
// against the seams (Executor, Transport via the collectives) and run
// unchanged on every backend.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/collective/communicator.h"
#include "core/train/config.h"
#include "core/train/node/local_workers.h"
#include "core/train/run/results.h"
#include "core/train/node/versioned_parameters.h"

namespace st::train {

class ControlAgent;

// Everything a system on one node works with. Owned by the trainer.
struct NodeContext {
  const TrainConfig& config;
  int rank = 0;
  runtime::Executor& executor;
  collective::Communicator& comm;
  LocalWorkers& workers;
  VersionedParameters& master;
  ResultsWriter& results;
  // Called (from a task) when iteration `iteration` has left the pipeline on
  // this node: every layer is at version iteration + 1.
  std::function<void(int iteration, const IterationRecord& record)> on_iteration_done;
  // The controller's agent on this node (stellatrain with the controller on;
  // null otherwise).
  ControlAgent* control = nullptr;
};

class System {
 public:
  virtual ~System() = default;
  virtual std::string name() const = 0;
  // Starts training; `finished` is posted once every iteration has left the
  // pipeline on this node. Errors are thrown from executor tasks.
  virtual void start(runtime::Task finished) = 0;
  // System-specific totals for summary.json (e.g. averaging rounds,
  // staleness); call after `finished`. Empty: none.
  virtual nlohmann::json stats() const { return nlohmann::json::object(); }
};

// Copies what the local workers measured (forward, backward and their
// device times, gather, loss, batches) into an iteration's record.
void record_local_times(IterationRecord& record, const LocalStepTimes& times);

// Per-layer helpers shared by the systems.
namespace detail {
double ms_since(runtime::Executor& executor, runtime::Nanos start);
}  // namespace detail

}  // namespace st::train
