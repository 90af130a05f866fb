#pragma once
// An Executor decorator that makes a real-time run take the time a
// compute-time model prices (core/runtime/compute_time_model.h) instead of
// the time its work takes here. It is how a timing run (no forward or
// backward math, docs/sim-compute.md "Timing mode") runs on real sockets:
// the emulator's node processes pace their compute by the scenario's
// profile or analytic model while real kernel TCP carries their bytes.
//
// compute(work, cost, done) follows the simulated executor's rules
// (sim/sim_executor.h) on the wall clock: the task takes its resource (the
// node's GPU `cost.device`, one of the node's CPU slots for device -1; tasks
// tied to no node never wait), first come, first served; its work runs when
// the resource is free; `done` runs the priced time after that start.
// Whatever the work posts is held back until then too, and each progress
// mark it reports runs at its priced share of the task, so a layer's
// gradient leaves a paced backward at its priced time.
//
// The real work must fit in its price. A task whose work ends after its
// priced end (this machine slower than the modelled one, or its threads
// busy) releases `done` at once, late: stats() counts such tasks and the
// worst lateness, so a run whose pacing did not hold can say so.
#include <array>
#include <memory>

#include "core/runtime/compute_time_model.h"
#include "core/runtime/executor.h"

namespace st::runtime {

// A task counts as late when its work ended this long after its priced end.
inline constexpr Nanos kPacingTolerance = std::chrono::milliseconds(1);
// Over this share of a node's tasks late, its run may have taken longer than
// the model says: the node warns, and the emulator's launcher lists it in
// the run's host.fell_behind (emu/host_check.h).
inline constexpr double kLateShareThatBreaksPacing = 0.01;

struct PacingCounts {
  uint64_t tasks = 0;       // compute tasks paced
  uint64_t late_tasks = 0;  // of those, ended over kPacingTolerance late
  double worst_late_ms = 0;
  double priced_s = 0;      // sum of the prices
  double work_s = 0;        // sum of the real work's wall time
  void add(Nanos price, Nanos work, Nanos late);
};

struct PacingStats : PacingCounts {
  std::array<PacingCounts, kTaskKinds> by_kind;  // indexed by TaskKind
};

class PacedExecutor : public Executor {
 public:
  virtual PacingStats stats() const = 0;
  virtual const ComputeTimeModel& compute_model() const = 0;
  // Node `node`'s CPU slots (runtime::cpu_slots: the scenario's count, else
  // the model's, else kDefaultCpuSlots).
  virtual int cpu_cores(int node) const = 0;
};

// `inner` runs the work and the timers (a thread pool); `model` must be
// deterministic (a measured model would price this machine by itself) and
// throws std::invalid_argument otherwise. `cpu_cores` 0: the model's count.
std::unique_ptr<PacedExecutor> make_paced_executor(std::unique_ptr<Executor> inner,
                                                   std::shared_ptr<const ComputeTimeModel> model, int cpu_cores = 0);

}  // namespace st::runtime
