#pragma once
// The real backend: nodes on this machine's threads and wall clock, with no
// WAN shaping. Either every node in this process over the in-process
// transport (TrainConfig::transport "inproc"), or this process as one rank
// of several over TCP ("tcp", torchrun-style: the emulator starts one such
// process per node in its namespaces). Compute is measured, not priced.
#include <memory>

#include "core/train/run/backend.h"
#include "core/train/run/node_host.h"

namespace st::train {

// The real backend's nodes for `config` (transports and threads are made
// when first asked for, so a system that brings its own process group
// never opens the engine's sockets).
std::unique_ptr<NodeHost> make_real_node_host(const TrainConfig& config);

class RealBackend final : public Backend {
 public:
  std::string name() const override { return "real"; }
  bool simulated() const override { return false; }
  bool has_network() const override { return false; }
  std::string summary_note() const override {
    return "real backend: every node runs in this process over the in-process transport on the wall clock; the "
           "scenario's links are not applied (no WAN shaping), so wan_bytes is null";
  }
  TrainResult train(const TrainConfig& config) override;
};

}  // namespace st::train
