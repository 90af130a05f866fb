#pragma once
// The one factory for the ways of running a training (train::Backend,
// core/train/run/backend.h): real, sim and emu. The only place in apps/
// that knows which backends this build has; every command picks its
// backend here by name and then sees only the interface.
#include <memory>
#include <string>
#include <vector>

#include "core/train/run/backend.h"
#include "net/topology_config.h"

namespace st::sim {
struct SimComputeSettings;
}
namespace st::util {
class YamlField;
}

namespace st::apps {

struct Scenario;

// What a backend is built from.
struct BackendInputs {
  std::string source;  // the scenario (or sim config) file, for messages and manifests
  net::TopologyConfig network;  // sim and emu
  // sim: how compute is priced (a scenario's `compute:` section; null in a
  // build without ns-3).
  std::shared_ptr<const sim::SimComputeSettings> sim_compute;
  std::string emu_delay = "auto";  // emu: auto, netem, nfqueue
  bool show_progress = true;       // emu: echo rank 0's lines
};

// sim, real, emu: every backend a command may name, built here or not.
const std::vector<std::string>& backend_names();
// Throws std::invalid_argument naming the backend (unknown, or not in this
// build and what to install), or what it cannot build from `inputs`.
std::unique_ptr<train::Backend> make_backend(const std::string& name, const BackendInputs& inputs);
BackendInputs backend_inputs(const Scenario& scenario);
// What this build has of a backend, for `stellatrain info`: its library
// versions, or "not built (why)".
std::string backend_status(const std::string& name);
// From `train --backend sim --sim-config FILE` (sim/sim_config.h); throws
// naming the file, key and line, or that this build has no ns-3.
BackendInputs backend_inputs_from_sim_config(const std::string& file);

// A scenario's `compute:` section as the sim backend prices it (null in a
// build without ns-3: the section is then not checked). `training` is the
// scenario's common settings (model, batch, data shape).
std::shared_ptr<const sim::SimComputeSettings> read_sim_compute(const util::YamlField& top, const Scenario& scenario,
                                                                const train::TrainConfig& training,
                                                                const std::string& base_dir);

// The stellatrain executable itself (/proc/self/exe): what the emu backend
// starts once per node and `run --jobs` once per run.
std::string self_executable();

// The arguments of `stellatrain train` (after the program name) that run
// one node of a scenario's system: the system's settings come from the
// scenario file itself (parsed by the node exactly as by `stellatrain run`,
// so every scenario option reaches it), the per-node and per-run settings
// of `node` (seed, iterations, rank, transport, addresses, peer timeout,
// threads, results folder, quiet) from flags. How the emu backend starts
// its node processes.
std::vector<std::string> node_arguments(const std::string& scenario_file, const std::string& system_label,
                                        const train::TrainConfig& node);

// Checks that `backend` can run `scenario`: a known backend this build has,
// a network it can build, and every system's settings (std::invalid_argument
// naming the file and key otherwise).
void check_backend(const Scenario& scenario, const std::string& backend);

}  // namespace st::apps
