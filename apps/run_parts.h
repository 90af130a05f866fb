#pragma once
// What every way of running a scenario's runs shares (one after another,
// --jobs child processes, --slurm job arrays: apps/run_command.cc,
// apps/run_cluster.cc): where a run's folder is, the list of runs, the
// options a one-run command forwards, and how results are written and
// shown.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/run_jobs.h"
#include "apps/run_summary.h"

namespace st::apps {

struct RunOptions;
struct Scenario;

// A run's folder inside the output folder: the system's label, and a
// folder per seed when there are several.
std::string run_folder(const std::string& label, uint64_t seed, const std::vector<uint64_t>& seeds);

// The runs of every system and seed, in summary order.
std::vector<RunJob> plan_jobs(const Scenario& scenario, const std::vector<uint64_t>& seeds);

// How a one-run command (`run ... --only-system`) is built for these runs:
// the program, scenario and output folder, the options it forwards, and
// what the summary reads back.
JobsOptions jobs_options(const Scenario& scenario, const RunOptions& options, const std::filesystem::path& out,
                         const std::string& backend);

// Writes `text` to a side file and renames it into place, so a reader (or
// a Ctrl-C) never sees half a file. Throws std::runtime_error naming it.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);
void write_summary(const std::filesystem::path& out, const nlohmann::ordered_json& summary);

// One line on a finished run, in the runner's log.
std::string describe(const RunOutcome& o, const std::string& clock);
// The summary's table on stdout.
void print_table(const nlohmann::ordered_json& summary);

}  // namespace st::apps
