#pragma once
namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain emu up|down|cleanup|list` (docs/emu.md).
void add_emu_command(CLI::App& app);
}  // namespace st::apps
