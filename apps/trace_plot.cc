// `stellatrain trace plot`: runs analysis/plot_trace.py with a python3 that
// has matplotlib. The interpreter is looked for, not assumed: a pyenv or venv
// python3 first on PATH often lacks matplotlib while the system one has it.
#include <fmt/format.h>
#include <fcntl.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/trace_command.h"
#include "traces/trace_io.h"

extern char** environ;

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// Runs argv[0] (searched on PATH) and waits. Nothing: it could not be
// started (not found, not executable). quiet: stdout and stderr to /dev/null.
std::optional<int> run_program(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return std::nullopt;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return std::nullopt;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::vector<std::string> python_candidates() {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("ST_PYTHON"); chosen && *chosen) candidates.push_back(chosen);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  return candidates;
}

// The first candidate that runs and imports matplotlib; otherwise an error
// that says which part is missing.
std::string python_with_matplotlib() {
  std::vector<std::string> found, tried;
  for (const auto& python : python_candidates()) {
    tried.push_back(python);
    const auto status = run_program({python, "-c", "import matplotlib"}, true);
    if (!status) continue;
    if (*status == 0) return python;
    found.push_back(python);
  }
  const std::string tried_list = fmt::format("{}", fmt::join(tried, ", "));
  if (found.empty())
    throw std::runtime_error(fmt::format(
        "trace plot needs python3, and none was found (tried {}); install python3 or set ST_PYTHON", tried_list));
  throw std::runtime_error(fmt::format(
      "trace plot needs matplotlib, which {} cannot import; install it (Debian: apt-get install python3-matplotlib) "
      "or set ST_PYTHON to a python3 that has it",
      fmt::join(found, " and ")));
}

fs::path plot_script() {
  const char* override_dir = std::getenv("ST_ANALYSIS_DIR");
#ifdef ST_ANALYSIS_DIR
  const fs::path dir = override_dir && *override_dir ? override_dir : ST_ANALYSIS_DIR;
#else
  const fs::path dir = override_dir && *override_dir ? override_dir : "analysis";
#endif
  const fs::path script = dir / "plot_trace.py";
  if (!fs::exists(script))
    throw std::runtime_error(fmt::format("trace plot: {} not found (set ST_ANALYSIS_DIR to the folder holding it)",
                                         script.string()));
  return script;
}

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
  const fs::path script = plot_script();
  const std::string python = python_with_matplotlib();
  TemporaryFile csv{fs::temp_directory_path() / fmt::format("stellatrain-plot-{}.csv", ::getpid())};
  {
    std::ofstream out(csv.path);
    traces::write_trace_csv(trace, out);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", csv.path.string()));
  }
  const auto status = run_program({python, script.string(), csv.path.string(), png_path, "--title", title}, false);
  if (!status) throw std::runtime_error(fmt::format("trace plot: could not start {}", python));
  if (*status != 0)
    throw std::runtime_error(fmt::format("trace plot: {} {} failed (exit status {})", python, script.string(), *status));
}

}  // namespace st::apps
