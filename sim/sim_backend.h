#pragma once
// The sim backend: every node of a run inside one ns-3 simulation, in
// virtual time (the simulated executor prices compute by its model, the
// simulated network carries the bytes). `stellatrain run` and `train
// --backend sim` reach it through the backend factory (apps/backends.h).
#include <memory>

#include "core/train/config.h"
#include "core/train/run/backend.h"
#include "core/train/run/node_host.h"
#include "sim/sim_config.h"

namespace st::sim {

// The compute model's settings for this run: its model, batch and input
// shape (from the dataset) on top of the configured ones.
ComputeModelConfig priced_for(const ComputeModelConfig& base, const train::TrainConfig& train);

// Builds a fresh simulation for one run (it owns ns-3's global simulator
// until it is destroyed, which calls Simulator::Destroy). Any number of
// simulations may run one after another in a process, each from a clean
// slate; while one is alive, making another throws std::logic_error (ns-3
// has one simulator per process). The compute-time model is priced for
// `train`'s model, batch and dataset shape (priced_for).
std::unique_ptr<train::NodeHost> make_sim_node_host(const SimRunConfig& config, const train::TrainConfig& train);

class SimBackend final : public train::Backend {
 public:
  // Throws std::invalid_argument naming what ns-3 cannot build
  // (plan_sim_network).
  explicit SimBackend(SimRunConfig config);
  std::string name() const override { return "sim"; }
  bool simulated() const override { return true; }
  void check(const train::TrainConfig& config) const override;
  train::TrainResult train(const train::TrainConfig& config) override;

 private:
  SimRunConfig config_;
};

}  // namespace st::sim
