#pragma once
#include <string>
#include <vector>

#include "core/train/config.h"

namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain train`: one training run of one system (see core/train/config.h).
void add_train_command(CLI::App& app);

// The arguments of `stellatrain train` (after the program name) that run
// one node of a scenario's system: the system's settings come from the
// scenario file itself (parsed by the node exactly as by `stellatrain run`,
// so every scenario option reaches it), the per-node and per-run settings
// of `node` (seed, iterations, rank, transport, addresses, peer timeout,
// threads, results folder, quiet) from flags. How the emulator starts its
// node processes.
std::vector<std::string> node_arguments(const std::string& scenario_file, const std::string& system_label,
                                        const train::TrainConfig& node);
}  // namespace st::apps
