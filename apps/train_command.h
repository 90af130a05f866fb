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

// The arguments of `stellatrain train` (after the program name) that give
// `config` back: how the emulator starts one node process per rank. A new
// TrainConfig field that a node must see needs its flag here too.
std::vector<std::string> train_arguments(const train::TrainConfig& config);
}  // namespace st::apps
