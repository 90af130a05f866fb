#pragma once
// `stellatrain sweep SCENARIO --lr ... [--momentum ...] [--warmup ...]`: every
// chosen system of a scenario at every combination of the listed optimizer
// settings, each system's best by time-to-accuracy in DIR/sweep.json
// (docs/convergence.md). The runs themselves are `stellatrain run` folders,
// so `stellatrain plot DIR` draws them.
namespace CLI {
class App;
}

namespace st::apps {

void add_sweep_command(CLI::App& app);

}  // namespace st::apps
