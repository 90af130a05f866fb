#include "core/train/systems/ddp_gloo/ddp_gloo.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/train/config.h"
#include "core/train/systems/ddp_gloo/gloo_training.h"

namespace st::train {

std::vector<OptionField> DdpGlooOptions::make_fields() {
  return Fields<DdpGlooOptions>().choice("comm_hook", &DdpGlooOptions::comm_hook, {"none", "fp16"}, "--comm-hook",
                                         "none or fp16 (c10d's FP16_COMPRESS hook on the Reducer)");
}

void DdpGlooOptions::validate(const TrainConfig& run) const {
  if (comm_hook != "none" && comm_hook != "fp16")
    throw std::invalid_argument(fmt::format("train config: comm_hook '{}' is not one of none, fp16", comm_hook));
  // c10d's loop runs its iterations; it does not watch the run's clock.
  if (run.iterations >= kUnboundedIterations)
    throw std::invalid_argument("train config: iterations ddp-gloo needs a number of iterations (it has no time budget)");
  if (comm_hook != "none" && run.total_workers() != run.nodes)
    throw std::invalid_argument(
        "train config: comm_hook c10d's hooks run on the Reducer, which ddp-gloo uses with one local worker "
        "(gpus_per_node 1 on every node)");
}

SystemDescriptor ddp_gloo_system() {
  SystemDescriptor d;
  d.name = "ddp-gloo";
  d.summary = "The real PyTorch c10d stack: Reducer over ProcessGroupGloo (real networks only)";
  d.make_options = [] { return std::make_unique<DdpGlooOptions>(); };
  d.run_own = run_gloo_training;
  d.real_network_only = true;
  d.simulated_stand_in = "ddp: the same ring algorithm on the engine's transport";
  return d;
}

}  // namespace st::train
