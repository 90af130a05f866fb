// `stellatrain trace plot`: runs analysis/plot_trace.py with a python3 that
// has matplotlib. The interpreter is looked for, not assumed: a pyenv or venv
// python3 first on PATH often lacks matplotlib while the system one has it.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "apps/python_script.h"
#include "apps/trace_command.h"
#include "traces/trace_io.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// A temporary file removed when this goes out of scope.
struct TemporaryFile {
  fs::path path;
  ~TemporaryFile() {
    std::error_code ignored;
    fs::remove(path, ignored);
  }
};

}  // namespace

void plot_trace_file(const std::string& trace_path, const std::string& png_path, const std::string& title,
                     double mahimahi_bin_s) {
  // Read and validate here, so bad traces get the library's messages, and
  // hand the script one simple CSV whatever the input format was.
  const traces::Trace trace = traces::read_trace(trace_path, mahimahi_bin_s);
  const fs::path script = python::analysis_script("plot_trace.py", "trace plot");
  const std::string python = python::with_matplotlib("trace plot");
  TemporaryFile csv{fs::temp_directory_path() / fmt::format("stellatrain-plot-{}.csv", ::getpid())};
  {
    std::ofstream out(csv.path);
    traces::write_trace_csv(trace, out);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", csv.path.string()));
  }
  const auto status = python::run_program({python, script.string(), csv.path.string(), png_path, "--title", title}, false);
  if (!status) throw std::runtime_error(fmt::format("trace plot: could not start {}", python));
  if (*status != 0)
    throw std::runtime_error(fmt::format("trace plot: {} {} failed (exit status {})", python, script.string(), *status));
}

}  // namespace st::apps
