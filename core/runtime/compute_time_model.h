#pragma once
// How long a compute task costs on the modelled hardware: the seam between
// the executors that price compute and the models that do the pricing. The
// simulated executor (sim/sim_executor.h) charges it in virtual time; the
// paced executor (paced_executor.h) makes a real-time run take it on the
// wall clock. The models themselves (measured, profile, analytic) are in
// sim/compute_model.h, which builds them from a scenario's `compute:`.
#include <nlohmann/json.hpp>

#include <string>

#include "core/runtime/executor.h"

namespace st::runtime {

class ComputeTimeModel {
 public:
  virtual ~ComputeTimeModel() = default;
  // Time charged for `task`, whose real work took `measured` here.
  // Throws std::invalid_argument for a task kind the model does not know.
  virtual Nanos cost(const ComputeCost& task, Nanos measured) const = 0;
  // For a task whose work reported progress marks (a backward reports one
  // per parameter as its gradient appears: Executor::post_progress), the
  // share of the task's charged time at which `mark` is reached, in [0, 1].
  // `measured_share` is where in the real work's wall time the mark came.
  virtual double progress_share(const ComputeCost& task, int mark, double measured_share) const = 0;
  // True when cost() ignores `measured` (a table or a formula, not this
  // machine's speed): runs priced by it are repeatable.
  virtual bool deterministic() const = 0;
  virtual nlohmann::json describe() const = 0;  // for the manifest
  // CPU cores of the machine that `node` models (a profile's `cpu_cores`):
  // executors give the node that many CPU slots unless the scenario says
  // otherwise. 0: the model does not say.
  virtual int cpu_cores(int node) const {
    (void)node;
    return 0;
  }
  // Where cpu_cores(node) comes from, for the manifest: "profile" (a
  // profile's count) or "this machine" (the `measured` model, which prices
  // this machine's own work and so has its cores).
  virtual std::string cpu_cores_origin(int node) const {
    (void)node;
    return "profile";
  }
};

// Node `node`'s CPU slots in an executor that prices compute by `model`:
// `scenario_cores` when above 0, else the model's machine's count, else
// kDefaultCpuSlots. The simulated and the paced executors both take it.
inline constexpr int kDefaultCpuSlots = 8;
inline int cpu_slots(const ComputeTimeModel& model, int scenario_cores, int node) {
  if (scenario_cores > 0) return scenario_cores;
  const int modelled = model.cpu_cores(node);
  return modelled > 0 ? modelled : kDefaultCpuSlots;
}

}  // namespace st::runtime
