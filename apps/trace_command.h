#pragma once
#include <string>

namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain trace gen|stats|convert|plot` (docs/traces.md).
void add_trace_command(CLI::App& app);

// `stellatrain trace plot`: draws a trace file into a PNG with
// analysis/plot_trace.py; throws std::runtime_error naming a missing
// python3, matplotlib or script.
void plot_trace_file(const std::string& trace_path, const std::string& png_path, const std::string& title,
                     double mahimahi_bin_s);
}  // namespace st::apps
