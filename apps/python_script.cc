#include "apps/python_script.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

extern char** environ;

namespace st::apps {
namespace fs = std::filesystem;

namespace python {

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

std::string with_matplotlib(const std::string& what) {
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("ST_PYTHON"); chosen && *chosen) candidates.push_back(chosen);
  candidates.push_back("python3");
  candidates.push_back("/usr/bin/python3");
  std::vector<std::string> found;
  for (const auto& python : candidates) {
    const auto status = run_program({python, "-c", "import matplotlib"}, true);
    if (!status) continue;
    if (*status == 0) return python;
    found.push_back(python);
  }
  if (found.empty())
    throw std::runtime_error(fmt::format("{} needs python3, and none was found (tried {}); install python3 or set "
                                         "ST_PYTHON",
                                         what, fmt::join(candidates, ", ")));
  throw std::runtime_error(fmt::format("{} needs matplotlib, which {} cannot import; install it (Debian: apt-get "
                                       "install python3-matplotlib) or set ST_PYTHON to a python3 that has it",
                                       what, fmt::join(found, " and ")));
}

fs::path analysis_script(const std::string& name, const std::string& what) {
  const char* override_dir = std::getenv("ST_ANALYSIS_DIR");
#ifdef ST_ANALYSIS_DIR
  const fs::path dir = override_dir && *override_dir ? override_dir : ST_ANALYSIS_DIR;
#else
  const fs::path dir = override_dir && *override_dir ? override_dir : "analysis";
#endif
  const fs::path script = dir / name;
  if (!fs::exists(script))
    throw std::runtime_error(
        fmt::format("{}: {} not found (set ST_ANALYSIS_DIR to the folder holding it)", what, script.string()));
  return script;
}

}  // namespace python

}  // namespace st::apps
