#pragma once
// The real backend: nodes on this machine's threads and wall clock, with no
// WAN shaping. Either every node in this process over the in-process
// transport (TrainConfig::transport "inproc"), or this process as one rank
// of several over TCP ("tcp", torchrun-style: the emulator starts one such
// process per node in its namespaces). Compute is measured, not priced,
// except in a timing run (math: timing), which skips the forward and
// backward math: there a compute-time model paces every compute task on the
// wall clock (core/runtime/paced_executor.h).
#include <functional>
#include <memory>

#include "core/train/run/backend.h"
#include "core/train/run/node_host.h"

namespace st::runtime {
class ComputeTimeModel;
}

namespace st::train {

// How a timing run's compute is paced: the compute-time model for a
// training (the scenario's profile or analytic model, priced for its model
// and batch), and each node's CPU slots (0: the model's count).
struct RealPacing {
  std::function<std::shared_ptr<const runtime::ComputeTimeModel>(const TrainConfig&)> model_for;
  int cpu_cores = 0;
  explicit operator bool() const { return static_cast<bool>(model_for); }
};

// The real backend's nodes for `config` (transports and threads are made
// when first asked for, so a system that brings its own process group
// never opens the engine's sockets).
// `pacing` (when set) paces a timing run's compute.
std::unique_ptr<NodeHost> make_real_node_host(const TrainConfig& config, const RealPacing& pacing = {});

class RealBackend final : public Backend {
 public:
  explicit RealBackend(RealPacing pacing = {}) : pacing_(std::move(pacing)) {}
  std::string name() const override { return "real"; }
  bool simulated() const override { return false; }
  bool has_network() const override { return false; }
  bool prices_compute() const override { return static_cast<bool>(pacing_); }
  std::string summary_note() const override {
    return "real backend: every node runs in this process over the in-process transport on the wall clock; the "
           "scenario's links are not applied (no WAN shaping), so wan_bytes is null";
  }
  TrainResult train(const TrainConfig& config) override;

 private:
  RealPacing pacing_;
};

}  // namespace st::train
