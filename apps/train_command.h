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

}  // namespace st::apps
