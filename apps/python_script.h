#pragma once
// Running the matplotlib scripts in analysis/ from the `stellatrain`
// command (plot, trace plot): finding an interpreter that has matplotlib,
// finding the script, running it. posix_spawn rather than system(): no shell
// quoting of user paths.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace st::apps {

// `what` names the command in error messages.
namespace python {
// Runs args[0] (searched on PATH) and waits; the exit status, or nothing
// when it could not be started. quiet: stdout and stderr to /dev/null.
std::optional<int> run_program(const std::vector<std::string>& args, bool quiet);
// ST_PYTHON, python3, /usr/bin/python3: the first that imports matplotlib
// (a pyenv or venv python3 first on PATH often lacks it). Throws
// std::runtime_error saying whether python3 or matplotlib is missing.
std::string with_matplotlib(const std::string& what);
// ST_ANALYSIS_DIR (environment, else the source tree's analysis/) / name;
// throws std::runtime_error when it is not there.
std::filesystem::path analysis_script(const std::string& name, const std::string& what);
}  // namespace python

}  // namespace st::apps
