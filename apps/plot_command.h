#pragma once
#include <string>

namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain plot DIR [--out FIGDIR] [--format png,svg]`: figures and
// report.md for a `stellatrain run --out DIR` folder, drawn by
// analysis/plot_run.py (docs/analysis.md).
void add_plot_command(CLI::App& app);

// The same for `run --plot` and `sweep --plot`: figures of DIR in
// DIR/figures (PNG and SVG).
void plot_results_folder(const std::string& dir);

}  // namespace st::apps
