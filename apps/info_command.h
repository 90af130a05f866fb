#pragma once
namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain info`: version, SIMD level, LibTorch and the backends built in.
void add_info_command(CLI::App& app);
}  // namespace st::apps
