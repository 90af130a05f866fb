#pragma once
// `run --slurm` and `sweep --slurm`: a command's runs (one per system, seed
// and setting) as the tasks of a Slurm job array, submitted with Slurm's
// own `sbatch` and watched with `squeue` (docs/byo.md, "Sweeps on a
// cluster"). Each task is the same one-run command that `--jobs` starts as
// a child process (apps/run_jobs.h), so a task leaves the run's folder and
// its outcome file in the shared results folder exactly as a local run
// does, and the merge into summary.json is the same.
//
// Re-running the same command is the resume: runs whose outcome file says
// they finished are kept, runs still queued or running from an earlier
// submission are left alone, and only the rest are submitted, as one new
// array. The folder remembers its submissions and settings in OUT/slurm/
// (settings.json, submissions.json, the array scripts and Slurm's own
// output); a folder made with other settings (another scenario file,
// --iterations, ...) is refused rather than mixed.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/run_jobs.h"

namespace CLI {
class App;
}

namespace st::apps {

struct SlurmOptions {
  bool enabled = false;
  std::string partition;            // sbatch --partition
  std::string time;                 // sbatch --time, per run (e.g. 30, 2:00:00)
  int cpus = 1;                     // sbatch --cpus-per-task
  std::string mem;                  // sbatch --mem (e.g. 8G)
  std::string gres;                 // sbatch --gres (e.g. gpu:1)
  std::vector<std::string> extra;   // further sbatch options, as given (e.g. --qos=short)
  int max_parallel = 0;             // at most this many tasks at once (--array=...%N); 0: Slurm's limit
  bool wait = true;                 // false: submit and return; a later run of the command merges
  double poll_s = 5;                // seconds between squeue polls while waiting
};

// The --slurm* options of `run` and `sweep`.
void add_slurm_options(CLI::App* command, SlurmOptions& options);

struct SlurmProgress {
  std::size_t done = 0;       // finished without an error (now or earlier)
  std::size_t waiting = 0;    // queued or running when the call returned
  std::size_t submitted = 0;  // in the array this call submitted
  bool finished() const { return waiting == 0; }
};

// Records the settings a results folder's Slurm runs are made with
// (OUT/slurm/settings.json) or, when the folder has some, checks they are
// these; throws std::invalid_argument naming the first that differs.
void check_slurm_settings(const std::filesystem::path& out, const nlohmann::json& settings);

// Submits, as one job array named `name`, every job that has not
// succeeded and is not queued from an earlier submission (their stale
// folders and outcome files are removed first), then, when slurm.wait,
// polls squeue until none is queued or running. A stop request (Ctrl-C)
// ends the wait and leaves the jobs running (the next call merges them).
// Throws std::runtime_error with sbatch's own message when it refuses.
SlurmProgress run_on_slurm(const std::vector<RunJob>& jobs, const JobsOptions& how, const SlurmOptions& slurm,
                           const std::string& name);

// Why a job that has not succeeded did not: its outcome's error, else the
// state Slurm reports for its task (sacct where accounting runs, else
// scontrol) and where its output is.
std::string slurm_job_failure(const std::filesystem::path& out, const RunJob& job);

}  // namespace st::apps
