#pragma once
// The ns-3 backend behind `stellatrain train --backend sim`: the simulated
// executor plus the simulated network, as a train::Backend. All nodes run in
// this process inside one ns-3 simulation.
#include <memory>

#include "core/train/backend.h"
#include "core/train/config.h"
#include "sim/sim_config.h"

namespace st::sim {

// Builds a fresh simulation (it owns ns-3's global simulator until it is
// destroyed, which calls Simulator::Destroy). The compute-time model is
// priced for `train`'s model, batch and dataset shape.
std::unique_ptr<train::Backend> make_sim_backend(const SimRunConfig& config, const train::TrainConfig& train);

}  // namespace st::sim
