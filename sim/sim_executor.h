#pragma once
// The simulated Executor (the Executor seam, docs/architecture.md): every task runs inside ns-3's
// event loop, on the one simulator thread, in virtual time.
//
// compute(work, cost, done): the task waits for its resource (a node's GPU
// `cost.device`, or one of the node's `cpu_cores` CPU slots for device -1;
// first come, first served), then the real work runs, the compute-time model
// prices it, and `done` runs that much virtual time later. Anything the work
// itself posts (or publishes through a posted continuation) is held back
// until then too, so no other task can see its effects early.
//
// post_progress(mark, task) from inside the work (a backward's per-layer
// gradient hooks) runs `task` at the task's start plus the compute-time
// model's share of the charged time for that mark (progress_share), so each
// layer leaves a backward at its own virtual time.
//
// post() runs a task at the current virtual time, after the events already
// due now (ns-3's FIFO order for equal times keeps runs deterministic).
// run_until() runs the simulator until the predicate holds after a task;
// it throws the first exception a task threw, or a clear error when the
// simulation runs out of events first or no task runs for
// `stall_timeout_s` of virtual time (a deadlock in the run).
#include <memory>
#include <string>

#include "core/runtime/executor.h"
#include "sim/compute_model.h"

namespace st::sim {

inline constexpr int kDefaultCpuCores = runtime::kDefaultCpuSlots;

struct SimExecutorOptions {
  // Parallel CPU slots per node (load, gather, compress, sparse step). 0:
  // as many as the compute-time model's machine has (a profile's
  // `cpu_cores`), else kDefaultCpuCores.
  int cpu_cores = 0;
  // Trace replay and link recording schedule events forever, so a deadlocked
  // run would never run out of events: it is an error when no engine task
  // runs for this long in virtual time (longer than any outage you replay).
  double stall_timeout_s = 600;
};

// Host cost of a simulated run, in wall seconds.
struct HostCost {
  double run_s = 0;      // inside run_until()
  double compute_s = 0;  // real work of compute tasks (LibTorch, compressors, optimizer)
  double tasks_s = 0;    // other engine tasks (collectives' bookkeeping, ...)
  double simulator_s() const { return run_s - compute_s - tasks_s; }  // ns-3 itself (TCP, links)
  double simulated_s = 0;  // virtual time covered
};

class SimExecutor : public runtime::Executor {
 public:
  virtual HostCost host_cost() const = 0;
  // Node `node`'s CPU slots, and where the number came from ("scenario",
  // "profile", "this machine" under the measured model, or "default").
  virtual int cpu_cores(int node) const = 0;
  virtual std::string cpu_cores_source(int node) const = 0;
  virtual const ComputeTimeModel& compute_model() const = 0;
};

// ns-3's simulator must be fresh (Simulator::Destroy() after earlier runs).
std::unique_ptr<SimExecutor> make_sim_executor(std::unique_ptr<ComputeTimeModel> model, SimExecutorOptions options = {});

}  // namespace st::sim
