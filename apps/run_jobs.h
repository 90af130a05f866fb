#pragma once
// `stellatrain run --jobs N`: a scenario's runs (one per system and seed) as
// child processes, N at a time. ns-3 keeps one simulator per process and
// runs it on one thread, so processes are how a many-core machine runs
// several simulations at once; each child is `stellatrain run` itself,
// told to do a single run (RunOptions::only_system / only_seed), writing
// the same files as a sequential run plus a small outcome file that the
// parent reads back. Only the sim backend takes --jobs: its clock is
// virtual, so runs side by side give the same results as one after another
// (the real and emu backends measure wall time, which sharing the machine
// would change).
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "apps/run_summary.h"

namespace st::apps {

struct RunJob {
  std::string label;     // the system's label in the scenario
  uint64_t seed = 0;
  std::string relative;  // the run's folder, relative to the output folder
};

struct JobsOptions {
  std::string program;        // this executable (a child is `program run ...`)
  std::string scenario_file;  // the scenario the children load
  std::string backend = "sim";  // the children's --backend
  std::filesystem::path out;  // the output folder (already prepared)
  int jobs = 2;               // at most this many children at a time
  int iterations = 0;         // forwarded: >0 overrides the budget
  int seeds = 0;              // forwarded: >0 is the number of seeds (RunOptions::seeds)
  std::vector<uint64_t> seed_list;  // forwarded: --seed-list when not empty (RunOptions::seed_list)
  bool timeline = false;      // forwarded
  // Forwarded as --quiet. Otherwise each child's log holds the trainer's
  // progress and evaluation lines, and the runner echoes the latest of
  // them every progress_every_s seconds (0: never).
  bool quiet = false;
  double progress_every_s = 0;
  std::string mtu;            // forwarded: --mtu when not empty
  std::string network;        // forwarded: --network when not empty
  double stage_sample = -1;   // forwarded: --stage-sample when >= 0
  double label_skew = -1;     // forwarded: --label-skew when >= 0
  double target_accuracy = 0;
  std::vector<double> report_targets;  // the scenario's (apps/run_summary.h)
  // Set: builds a job's command line in place of `run` (sweep's points).
  std::function<std::vector<std::string>(const RunJob&)> command;
};

// The command line that does one job: `program run SCENARIO --only-system
// LABEL --only-seed SEED ...` with the forwarded options (or `command`'s).
std::vector<std::string> job_command(const RunJob& job, const JobsOptions& options);

// True when the job's outcome file says it finished without an error.
bool job_succeeded(const std::filesystem::path& out, const RunJob& job);

// What a finished job left: its outcome file and the run's own files;
// `ended` says how its process ended, for the error when it left none.
RunOutcome collect_job(const RunJob& job, const JobsOptions& options, const std::string& ended, double wall_s);

// Where a job's output (stdout and stderr) and outcome file go: the
// output folder's logs/ (the run's own folder belongs to the trainer).
std::filesystem::path job_log_path(const std::filesystem::path& out, const RunJob& job);
std::filesystem::path job_outcome_path(const std::filesystem::path& out, const RunJob& job);

// Runs every job in a child process and returns their outcomes in the
// order of `jobs`. A child that fails or dies is an outcome with an error
// naming its log; the others still run. On SIGINT/SIGTERM (a stop request)
// each running child gets that signal once, finishes its current step, keeps
// its files; jobs not started are marked, and the caller's stop request
// stays set for it to report.
std::vector<RunOutcome> run_jobs(const std::vector<RunJob>& jobs, const JobsOptions& options);

// The child's side, called once its interrupt handlers are installed:
// unblocks SIGINT/SIGTERM (the parent starts children with them blocked, so
// an early one waits for the handlers), and when stdin is the parent's
// lifeline pipe, starts a thread that asks the run to stop (as SIGHUP: the
// parent hung up) once the pipe reads end-of-file.
void start_as_job_child();

// The child's side: the numbers the parent cannot read from the run's
// files (the mean iteration time the trainer returns, the error, if any).
void write_job_outcome(const std::filesystem::path& path, const RunOutcome& outcome);

}  // namespace st::apps
