#pragma once
// One training run on the emulated network, end to end (what `stellatrain
// run --backend emu` does per system and seed): remove orphans of earlier
// runs, build the network, start one node process per rank in its
// namespace (rendezvous at rank 0's address), wait, then merge what the
// ranks wrote into the sim backend's results layout (manifest.json,
// iterations.csv, eval.csv, link.csv) and remove the network. docs/emu.md.
#include <functional>
#include <string>
#include <vector>

#include "core/train/config.h"
#include "net/topology_config.h"

namespace st::emu {

struct EmuTrainingRequest {
  net::TopologyConfig network;
  // The run: system, model, ... and out_dir (the run's results folder).
  // nodes must equal the topology's node count; rank, transport, master
  // and listen addresses are set per node here.
  train::TrainConfig config;
  std::string program;  // the stellatrain executable that the nodes run
  // `stellatrain train`'s arguments for a node's config (apps/train_command.h).
  std::function<std::vector<std::string>(const train::TrainConfig&)> arguments;
  std::string delay = "auto";  // auto, netem, nfqueue
  std::string description;     // for the run registry (e.g. the scenario file)
  std::string label;           // for progress lines (e.g. "stellatrain seed 1")
  bool show_rank0 = true;      // echo rank 0's output
  double stall_timeout_s = 600;
};

struct EmuTrainingResult {
  double wall_s = 0;
  double mean_iteration_ms = 0;  // rank 0's
};

// The peer timeout the nodes get: the requested one, or more when a trace
// has outages (TCP's retransmission backoff can stretch an outage of T
// seconds to about 2T of silence).
double peer_timeout_for(const net::TopologyConfig& network, double requested_s);

// Throws EmuError (a node failed: which rank, how, the last line of its
// log), EmuInterrupted (a signal; the run was stopped and cleaned up).
EmuTrainingResult run_emulated_training(const EmuTrainingRequest& request);

}  // namespace st::emu
