// `stellatrain plot`: runs analysis/plot_run.py on a results folder with a
// python3 that has matplotlib. The script reports a broken results folder
// itself (one line naming the file, exit status 2); this side only finds the
// interpreter and the script and passes the options on.
#include "apps/plot_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>
#include <stdexcept>

#include "apps/python_script.h"

namespace st::apps {
namespace fs = std::filesystem;


namespace {

// Exit status with which plot_run.py reports a broken results folder after
// printing its own message.
constexpr int kInputError = 2;

struct PlotOptions {
  std::string dir, out, format = "png,svg";
};

void plot_results(const PlotOptions& o) {
  if (!fs::is_directory(o.dir)) throw std::runtime_error(fmt::format("plot: {}: no such directory", o.dir));
  const fs::path script = python::analysis_script("plot_run.py", "plot");
  const std::string python = python::with_matplotlib("plot");
  std::vector<std::string> args{python, script.string(), o.dir, "--format", o.format};
  if (!o.out.empty()) args.insert(args.end(), {"--out", o.out});
  const auto status = python::run_program(args, false);
  if (!status) throw std::runtime_error(fmt::format("plot: could not start {}", python));
  if (*status == kInputError) throw CLI::RuntimeError(kInputError);  // the script has said why
  if (*status != 0)
    throw std::runtime_error(fmt::format("plot: {} {} failed (exit status {})", python, script.string(), *status));
}

}  // namespace

void plot_results_folder(const std::string& dir) { plot_results(PlotOptions{dir, "", "png,svg"}); }

void add_plot_command(CLI::App& app) {
  auto options = std::make_shared<PlotOptions>();
  auto* cmd = app.add_subcommand("plot", "Figures and report.md for a `stellatrain run --out DIR` folder (matplotlib)");
  cmd->add_option("dir", options->dir, "Results folder (holds summary.json)")->required();
  cmd->add_option("--out", options->out, "Figure folder (default DIR/figures)");
  cmd->add_option("--format", options->format, "Comma-separated figure formats: png, svg")->capture_default_str();
  cmd->callback([options] { plot_results(*options); });
}

}  // namespace st::apps
