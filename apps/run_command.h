#pragma once
// `stellatrain run SCENARIO`: runs every system of a scenario file
// (apps/scenario.h) on one backend, one results folder per system and seed,
// and writes DIR/summary.json (TTA, best accuracy, iterations, WAN bytes,
// mean iteration time, speedup over ddp). docs/runner.md describes it.
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "apps/slurm_launcher.h"

namespace CLI {
class App;
class Option;
}

namespace st::apps {

struct RunOptions {
  std::string scenario;  // the YAML file
  std::string backend;   // sim, real or emu; "" = the scenario's
  std::string out_dir;   // "" = results/<scenario name>
  int seeds = 0;         // >0: run this many seeds (the scenario's first, then counting on)
  // Non-empty: exactly these seeds, in this order, in place of the
  // scenario's list (--seed-list; not with --seeds).
  std::vector<uint64_t> seed_list;
  bool quiet = false;    // no per-iteration progress from the trainer
  int iterations = 0;    // >0: every system runs this many iterations (a shorter budget)
  std::string emu_delay = "auto";  // emu: auto, netem or nfqueue
  bool timeline = false;  // each run writes timeline.json (core/runtime/timeline.h)
  int jobs = 1;           // sim: run this many systems/seeds at once, as child processes (apps/run_jobs.h)
  // With jobs > 1 and not quiet: every this many seconds the runner prints
  // each running child's latest line of output (0: never).
  double progress_every_s = 300;
  // "" = the scenario's links.mtu; else "auto" or bytes in place of it
  // (sim and emu; a speed knob for ns-3, docs/sim.md).
  std::string mtu;
  // "" = the scenario's links.model; else packet or flow in place of it
  // (sim: ns-3's packets or the flow-level model, docs/sim-flow.md).
  std::string network;
  // >= 0: the share of each layer the CPU stages run on, in place of the
  // scenario's compute.stage_sample (0: full size; timing runs only,
  // docs/sim-compute.md "Sampled stages"); < 0: the scenario's.
  double stage_sample = -1;
  // >= 0: where every system's training data lives (dataset.label_skew,
  // core/data/placement.h) in place of the scenario's; < 0: the scenario's.
  double label_skew = -1;
  // Non-empty: only the scenario's systems with these labels run (the
  // summary then holds only them; a speedup needs its reference among them).
  std::vector<std::string> systems;
  // A child of --jobs: do only this system's run with this seed, into the
  // prepared output folder, and write its outcome file instead of summary.json.
  std::string only_system;
  long long only_seed = -1;
  // --slurm: the runs as a Slurm job array (apps/slurm_launcher.h).
  SlurmOptions slurm;
  bool plot = false;  // draw the figures (`stellatrain plot`) once summary.json is written
  // Run nothing: write summary.json from the runs already in the results
  // folder (every system of the scenario, or those of `systems`, whose runs
  // match the scenario for every seed, as a rerun into the folder keeps
  // them: apps/run_keep.h). For runs put together from several machines.
  bool summarize = false;
  // A scenario changed in memory (sweep's points): how a job's command
  // line rebuilds its run, and the settings that must match for a results
  // folder to be resumed (added to run's own).
  std::function<std::vector<std::string>(const RunJob&)> job_command;
  nlohmann::json slurm_settings = nlohmann::json::object();
};

// What a `run --slurm --slurm-no-wait` returns while runs are still queued:
// {"slurm": {"waiting": N, "done": M, "submitted": K}} and no "systems".
inline bool slurm_pending(const nlohmann::ordered_json& summary) { return summary.contains("slurm"); }

// Returns the summary it wrote to DIR/summary.json. Throws on a bad scenario
// or options (util::YamlError / std::invalid_argument naming the key); a
// failing run is recorded in the summary ("error") and the others still run.
nlohmann::ordered_json run_scenario(const RunOptions& options);
// The same for a scenario already loaded (and possibly changed, as `sweep`
// does); options.scenario is not read.
struct Scenario;
nlohmann::ordered_json run_scenario(const Scenario& scenario, const RunOptions& options);

void add_run_command(CLI::App& app);

// `--seed-list S1,S2` on `cmd` (run and sweep): seeds as the scenario's
// (0 to 2^53), not together with `count` (their --seeds).
CLI::Option* add_seed_list_option(CLI::App* cmd, std::vector<uint64_t>& seed_list, CLI::Option* count,
                                  const std::string& help);

}  // namespace st::apps
