#pragma once
// `stellatrain bench sim`: what the ns-3 backend costs for a training run.
namespace CLI {
class App;
}

namespace st::apps {

// Adds `sim` under the existing `bench` subcommand (no-op without ns-3).
void add_sim_bench_command(CLI::App& app);

}  // namespace st::apps
