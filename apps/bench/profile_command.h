#pragma once
// `stellatrain bench profile`: measures this machine's compute rates and
// writes a compute profile (the YAML the sim backend's `profile` model
// reads; format in docs/sim.md).
namespace CLI {
class App;
}

namespace st::bench {

void add_profile_command(CLI::App& bench);

}  // namespace st::bench
