#pragma once
// The emu backend: one `stellatrain train --transport tcp` process per node
// in Linux network namespaces, over veth links shaped by HTB replaying the
// scenario's traces in real time (emu_run.h does one run end to end). Its
// results are in wall seconds, and it needs root. `stellatrain run
// --backend emu` reaches it through the backend factory (apps/backends.h).
#include <functional>
#include <string>
#include <vector>

#include "core/train/run/backend.h"
#include "net/topology_config.h"

namespace st::emu {

struct EmuBackendOptions {
  std::string source;  // the scenario file, for messages and the run registry
  net::TopologyConfig network;
  std::string program;  // the stellatrain executable that the nodes run
  // `stellatrain train`'s arguments for a node's config (apps/train_command.h).
  std::function<std::vector<std::string>(const train::TrainConfig&)> arguments;
  std::string delay = "auto";  // auto, netem, nfqueue
  bool show_rank0 = true;      // echo rank 0's output
  // True when the scenario prices compute by a profile or analytic model:
  // the node processes then pace a timing run's compute by it
  // (core/runtime/paced_executor.h), so timing runs are allowed.
  bool nodes_price_compute = false;
};

class EmuBackend final : public train::Backend {
 public:
  // Throws std::invalid_argument naming what the emulator cannot build
  // (plan_emulation).
  explicit EmuBackend(EmuBackendOptions options);
  std::string name() const override { return "emu"; }
  bool simulated() const override { return false; }
  bool prices_compute() const override { return options_.nodes_price_compute; }
  void check(const train::TrainConfig& config) const override;
  void check_host() const override;
  bool cleans_up_after_interrupt() const override { return true; }
  std::string summary_note() const override {
    return "emu backend: one process per node in Linux network namespaces over real kernel TCP; the WAN replays "
           "the scenario's traces with HTB; compute is real and on the wall clock (each run's manifest records the "
           "host's CPU count and load)";
  }
  // A stop request stops the node processes and removes the network; the
  // result then says which signal came (TrainResult::interrupted_by).
  train::TrainResult train(const train::TrainConfig& config) override;

 private:
  EmuBackendOptions options_;
};

}  // namespace st::emu
