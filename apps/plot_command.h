#pragma once

namespace CLI {
class App;
}
namespace st::apps {
// `stellatrain plot DIR [--out FIGDIR] [--format png,svg]`: figures and
// report.md for a `stellatrain run --out DIR` folder, drawn by
// analysis/plot_run.py (docs/analysis.md).
void add_plot_command(CLI::App& app);

}  // namespace st::apps
