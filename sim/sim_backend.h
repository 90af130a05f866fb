#pragma once
// The ns-3 backend behind `stellatrain train --backend sim`: the simulated
// executor plus the simulated network, as a train::Backend. All nodes run in
// this process inside one ns-3 simulation.
#include <memory>

#include "core/train/backend.h"
#include "core/train/config.h"
#include "sim/sim_config.h"

namespace st::sim {

// The compute model's settings for this run: its model, batch and input
// shape (from the dataset) on top of the configured ones.
ComputeModelConfig priced_for(const ComputeModelConfig& base, const train::TrainConfig& train);

// Builds a fresh simulation (it owns ns-3's global simulator until it is
// destroyed, which calls Simulator::Destroy). Any number of simulations may
// run one after another in a process, each from a clean slate; while one
// backend is alive, making another throws std::logic_error (ns-3 has one
// simulator per process). The compute-time model is priced for `train`'s
// model, batch and dataset shape (priced_for).
std::unique_ptr<train::Backend> make_sim_backend(const SimRunConfig& config, const train::TrainConfig& train);

}  // namespace st::sim
