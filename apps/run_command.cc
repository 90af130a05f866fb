#include "apps/run_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include "apps/backends.h"
#include "apps/interrupt.h"
#include "apps/run_cluster.h"
#include "apps/run_jobs.h"
#include "apps/run_keep.h"
#include "apps/run_parts.h"
#include "apps/run_summary.h"
#include "apps/scenario.h"
#include "core/runtime/stop_request.h"
#include "core/train/run/backend.h"
#include "net/network_plan.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// The seeds to run: `listed` when given, else the scenario's, cut to
// `count` or extended by counting on from the largest (count 0: all of
// the scenario's).
std::vector<uint64_t> choose_seeds(std::vector<uint64_t> seeds, int count, const std::vector<uint64_t>& listed) {
  if (!listed.empty()) {
    if (count > 0) throw std::invalid_argument("--seeds and --seed-list: give one");
    for (auto it = listed.begin(); it != listed.end(); ++it)
      if (std::find(listed.begin(), it, *it) != it)
        throw std::invalid_argument(fmt::format("--seed-list: seed {} is listed twice", *it));
    return listed;
  }
  if (count <= 0) return seeds;
  uint64_t next = *std::max_element(seeds.begin(), seeds.end()) + 1;
  while (static_cast<int>(seeds.size()) < count) seeds.push_back(next++);
  seeds.resize(static_cast<std::size_t>(count));
  return seeds;
}

// A folder that is empty, new, or an earlier `stellatrain run` output (the
// folders of the systems about to run are replaced, the others left for
// apps/run_keep.h); anything else is refused rather than mixed in.
void prepare_out_dir(const fs::path& out, const Scenario& scenario) {
  if (fs::exists(out) && !fs::is_directory(out))
    throw std::invalid_argument(fmt::format("--out {}: exists and is not a folder", out.string()));
  if (fs::exists(out) && !fs::is_empty(out)) {
    if (!fs::exists(out / "scenario.yaml") && !fs::exists(out / "summary.json"))
      throw std::invalid_argument(fmt::format(
          "--out {}: the folder is not empty and holds no earlier `stellatrain run` results; choose another", out.string()));
    for (const auto& system : scenario.systems) fs::remove_all(out / system.label);
    fs::remove(out / "summary.json");
  }
  fs::create_directories(out);
  fs::copy_file(scenario.source, out / "scenario.yaml", fs::copy_options::overwrite_existing);
}

// One training run of one system and seed into `dir` on `backend`; what
// the summary needs comes back from the run's own files (eval.csv,
// manifest.json), so summary.json agrees with what the plots read.
RunOutcome run_one(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                   train::TrainConfig config, const fs::path& out, const std::string& relative_dir) {
  config.out_dir = (out / relative_dir).string();
  config.timeline = options.timeline;
  RunOutcome outcome;
  outcome.seed = config.seed;
  outcome.dir = relative_dir;
  const auto started = std::chrono::steady_clock::now();
  try {
    const train::TrainResult result = backend.train(config);
    outcome = read_outcome(config.out_dir, relative_dir, config.seed, scenario.target_accuracy, scenario.report_targets);
    outcome.mean_iteration_s = result.mean_iteration_ms / 1000;
  } catch (const std::exception& e) {
    outcome.error = e.what();
  }
  outcome.host_wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return outcome;
}

// One run's configuration: the system's (with --stage-sample and
// --label-skew already applied, `with_overrides`), with this seed (its data
// order, initialisation and trace offset) and the per-run options.
train::TrainConfig run_config(const Scenario& scenario, const ScenarioSystem& system, uint64_t seed,
                              const RunOptions& options) {
  auto config = system.config;
  config.seed = seed;
  config.trace_offset_s = scenario.trace_offset_for(seed);
  config.quiet = options.quiet;
  if (options.iterations > 0) config.iterations = options.iterations;
  return config;
}

// --stage-sample and --label-skew, applied to the loaded scenario's systems
// before they are picked: the runs, the kept runs' manifest check and the
// summary all read them from the systems' configs, as they would the file's
// own keys.
void with_overrides(Scenario& scenario, const RunOptions& options) {
  for (auto& system : scenario.systems) {
    if (options.stage_sample >= 0) system.config.stage_sample.fraction = options.stage_sample;
    if (options.label_skew >= 0) system.config.label_skew = options.label_skew;
  }
}

// --stage-sample and --label-skew are checked against every system before
// any run starts, as the scenario's own keys would be.
void check_overrides(const Scenario& scenario, const RunOptions& options) {
  std::vector<std::string> given;
  if (options.stage_sample >= 0) given.push_back(fmt::format("--stage-sample {}", options.stage_sample));
  if (options.label_skew >= 0) given.push_back(fmt::format("--label-skew {}", options.label_skew));
  if (given.empty()) return;
  for (const auto& system : scenario.systems) {
    try {
      train::validate(run_config(scenario, system, 1, options));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: {}: {}", fmt::join(given, " "), system.label, e.what()));
    }
  }
}

// The runs one after another in this process (the default).
void run_in_turn(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                 const std::vector<uint64_t>& seeds, const fs::path& out, SummaryBuilder& summary) {
  const std::string clock = backend.simulated() ? "simulated" : "wall";
  const std::size_t total = scenario.systems.size() * seeds.size();
  std::size_t done = 0;
  for (const auto& system : scenario.systems) {
    std::vector<RunOutcome> outcomes;
    for (const auto seed : seeds) {
      const auto config = run_config(scenario, system, seed, options);
      const std::string relative = run_folder(system.label, seed, seeds);
      spdlog::info("[{}/{}] {}: {} seed {} on the {} backend -> {}", ++done, total, scenario.name, system.label, seed,
                   backend.name(), (out / relative).string());
      outcomes.push_back(run_one(scenario, options, backend, config, out, relative));
      if (const int signal = runtime::stop_requested(); signal != 0) {
        // This run stopped early: keep what finished, mark it, stop `run`.
        outcomes.back().error = fmt::format("interrupted by signal {}: the run stopped early (its files are kept)", signal);
        summary.add_system(system, outcomes);
        write_summary(out, summary.json());
        throw Interrupted(signal);
      }
      spdlog::info("[{}/{}] {} seed {}: {}", done, total, system.label, seed, describe(outcomes.back(), clock));
    }
    summary.add_system(system, outcomes);
    write_summary(out, summary.json());  // after every system: a long run can be watched, an abort loses little
  }
}

// --jobs N: the runs as child processes, N at a time (apps/run_jobs.h).
void run_in_processes(const Scenario& scenario, const RunOptions& options, const std::vector<uint64_t>& seeds,
                      const fs::path& out, SummaryBuilder& summary) {
  for (const auto& system : scenario.systems)
    if (system.label == "logs")
      throw std::invalid_argument("--jobs: a system labelled 'logs' would share the runs' output folder OUT/logs; "
                                  "give it another label");
  const std::vector<RunJob> jobs = plan_jobs(scenario, seeds);
  const JobsOptions job_options = jobs_options(scenario, options, out, "sim");
  spdlog::info("{}: {} runs, {} at a time (child processes)", scenario.name, jobs.size(), options.jobs);
  const auto outcomes = run_jobs(jobs, job_options);
  std::size_t i = 0;
  for (const auto& system : scenario.systems) {
    std::vector<RunOutcome> mine(outcomes.begin() + i, outcomes.begin() + i + seeds.size());
    for (const auto& o : mine) spdlog::info("{} seed {}: {}", system.label, o.seed, describe(o, "simulated"));
    summary.add_system(system, mine);
    i += seeds.size();
  }
  write_summary(out, summary.json());
  if (const int signal = runtime::stop_requested(); signal != 0) throw Interrupted(signal);
}

// A child of --jobs: one run into the folder its parent prepared, and the
// outcome file the parent reads (no summary.json: the parent writes it).
nlohmann::ordered_json run_single_job(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                      const std::vector<uint64_t>& seeds, const fs::path& out) {
  const auto system = std::find_if(scenario.systems.begin(), scenario.systems.end(),
                                   [&](const ScenarioSystem& s) { return s.label == options.only_system; });
  if (system == scenario.systems.end())
    throw std::invalid_argument(fmt::format("--only-system {}: no such system in {}", options.only_system, scenario.source));
  if (options.only_seed < 0) throw std::invalid_argument("--only-system needs --only-seed");
  const auto seed = static_cast<uint64_t>(options.only_seed);
  runtime::clear_stop_request();
  runtime::StopOnSignals interrupts;
  start_as_job_child();  // only now may SIGINT/SIGTERM arrive (apps/run_jobs.h)
  const auto config = run_config(scenario, *system, seed, options);
  const RunJob job{system->label, seed, run_folder(system->label, seed, seeds)};
  auto outcome = run_one(scenario, options, backend, config, out, job.relative);
  // As when run in turn: a stopped run is marked so, whatever else it
  // could not read (a run stopped before its first evaluation has none).
  if (const int signal = runtime::stop_requested(); signal != 0)
    outcome.error = fmt::format("interrupted by signal {}: the run stopped early (its files are kept)", signal);
  write_job_outcome(job_outcome_path(out, job), outcome);
  spdlog::info("{} seed {}: {}", system->label, seed, describe(outcome, backend.simulated() ? "simulated" : "wall"));
  nlohmann::ordered_json none;
  none["systems"] = nlohmann::ordered_json::object();
  return none;
}

}  // namespace

namespace {

// --mtu: the scenario with links.mtu replaced ("auto" or bytes), checked as
// the file's own key would be.
Scenario with_mtu(const Scenario& scenario, const std::string& mtu) {
  Scenario changed = scenario;
  if (mtu == "auto") {
    changed.network.mtu = 0;
  } else {
    // Digits only, as the YAML key takes them; 0 would mean auto, which has its name.
    const bool digits = !mtu.empty() && mtu.size() <= 6 &&
                        std::all_of(mtu.begin(), mtu.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(mtu) == 0)
      throw std::invalid_argument(fmt::format("--mtu {}: give 'auto' or a number of bytes, e.g. 9000", mtu));
    changed.network.mtu = std::stoi(mtu);
  }
  try {
    (void)net::plan_network(changed.network);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("--mtu {}: {}", mtu, e.what()));
  }
  return changed;
}

// `file_systems`: with --systems, every system of the scenario file in its
// order (the others may keep their earlier runs, apps/run_keep.h); empty
// otherwise.
nlohmann::ordered_json run_prepared(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                    const std::vector<ScenarioSystem>& file_systems = {});

bool has_label(const std::vector<ScenarioSystem>& systems, const std::string& label) {
  return std::any_of(systems.begin(), systems.end(), [&](const ScenarioSystem& s) { return s.label == label; });
}

// The file's systems that did not run now.
std::vector<ScenarioSystem> not_rerun(const std::vector<ScenarioSystem>& file_systems,
                                      const std::vector<ScenarioSystem>& ran) {
  std::vector<ScenarioSystem> others;
  for (const auto& system : file_systems)
    if (!has_label(ran, system.label)) others.push_back(system);
  return others;
}

// The backend the runs go to, built from the scenario as --mtu and
// --emu-delay change it.
std::unique_ptr<train::Backend> backend_for(const Scenario& scenario, const RunOptions& options,
                                            const std::string& name) {
  auto inputs = backend_inputs(scenario);
  inputs.emu_delay = options.emu_delay;
  inputs.show_progress = !options.quiet;
  return make_backend(name, inputs);
}

// `from_file`: the scenario is its file as loaded, which --jobs's child
// processes load again (and apply --mtu to again); one changed in memory
// (sweep's) runs in turn.
nlohmann::ordered_json run_loaded(const Scenario& as_loaded, const RunOptions& options, bool from_file) {
  if (options.jobs > 1 && !from_file)
    throw std::invalid_argument("--jobs: the runs' processes load the scenario from its file; a scenario changed in "
                                "memory runs one run at a time");
  if (options.slurm.enabled && !from_file && !options.job_command)
    throw std::invalid_argument("--slurm: the runs' tasks load the scenario from its file; a scenario changed in "
                                "memory needs a command per run");
  const std::string name = options.backend.empty() ? as_loaded.backend : options.backend;
  // --network first: `--backend emu --network packet` runs a flow scenario's
  // links on the emulator.
  Scenario loaded = as_loaded;
  if (!options.network.empty()) {
    loaded.network.model = *net::network_model_from_name(options.network);  // CLI11 checked the name
    if (loaded.network.model == net::NetworkModel::flow && name != "sim")
      throw std::invalid_argument(fmt::format(
          "--network flow: the flow-level model is the sim backend's; the {} backend carries real packets", name));
  }
  with_overrides(loaded, options);
  const std::vector<ScenarioSystem> file_systems =
      options.systems.empty() ? std::vector<ScenarioSystem>{} : loaded.systems;
  loaded.systems = systems_labelled(loaded, options.systems);
  check_overrides(loaded, options);  // first, so that an option's error names the option
  check_backend(loaded, name);
  Scenario scenario = loaded;
  if (!options.mtu.empty()) {
    if (!backend_for(loaded, options, name)->has_network())
      throw std::invalid_argument(fmt::format(
          "--mtu: the {} backend applies no network (no links, no MTU); use sim or emu", name));
    scenario = with_mtu(loaded, options.mtu);
  }
  const auto backend = backend_for(scenario, options, name);
  return run_prepared(scenario, options, *backend, file_systems);
}

// The network model a sim run's manifest must show to be kept ("" when
// the backend applies none).
std::string kept_network_model(const Scenario& scenario, const train::Backend& backend) {
  return backend.simulated() && backend.has_network() ? net::network_model_name(scenario.network.model) : "";
}

// --summarize: no run; summary.json from the runs `out` already holds.
nlohmann::ordered_json summarize_runs(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                      const std::vector<uint64_t>& seeds, const fs::path& out,
                                      const std::vector<ScenarioSystem>& file_systems) {
  // What would run, draw or write more than summary.json is refused, not ignored.
  for (const auto& [given, flag] : {std::pair{options.slurm.enabled, "--slurm"}, std::pair{options.jobs > 1, "--jobs"},
                                    std::pair{options.plot, "--plot (draw afterwards: stellatrain plot OUT)"},
                                    std::pair{options.timeline, "--timeline"}})
    if (given) throw std::invalid_argument(fmt::format("--summarize runs nothing and writes only summary.json: leave out {}", flag));
  const auto summary = summarize_kept(scenario, backend, seeds, out, kept_network_model(scenario, backend),
                                      file_systems.empty() ? scenario.systems : file_systems,
                                      [&](const ScenarioSystem& system, uint64_t seed) {
                                        return run_config(scenario, system, seed, options);
                                      });
  print_table(summary);
  fmt::print("\nsummary: {}\n", (out / "summary.json").string());
  return summary;
}

// The runs of a checked scenario on `backend`.
nlohmann::ordered_json run_prepared(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                    const std::vector<ScenarioSystem>& file_systems) {
  if (options.seeds < 0) throw std::invalid_argument("--seeds: must be at least 1");
  const auto seeds = choose_seeds(scenario.seeds, options.seeds, options.seed_list);
  backend.check_host();  // before anything is written
  const fs::path out = options.out_dir.empty() ? fs::path("results") / scenario.name : fs::path(options.out_dir);
  if (options.iterations < 0) throw std::invalid_argument("--iterations: must be at least 1");
  if (options.summarize) return summarize_runs(scenario, options, backend, seeds, out, file_systems);
  if (!options.only_system.empty()) return run_single_job(scenario, options, backend, seeds, out);
  if (options.slurm.enabled) {
    const auto summary = run_on_cluster(scenario, options, backend, seeds, out);
    if (!slurm_pending(summary)) {
      print_table(summary);
      fmt::print("\nsummary: {}\n", (out / "summary.json").string());
    }
    return summary;
  }
  if (options.jobs > 1 && !backend.simulated())
    throw std::invalid_argument(fmt::format(
        "--jobs {}: only the sim backend runs several at once (the {} backend measures wall time, which runs "
        "sharing the machine would change)",
        options.jobs, backend.name()));
  const auto others = not_rerun(file_systems, scenario.systems);
  bool same_scenario = !others.empty() && earlier_scenario_name(out) == scenario.name;
  if (same_scenario) {  // before prepare_out_dir replaces the earlier copy
    const std::string difference = scenario_difference(out / "scenario.yaml", scenario.source);
    if (!difference.empty()) {
      spdlog::warn("no system is kept from the earlier run in {}: the scenario differs from its scenario.yaml at {}",
                   out.string(), difference);
      same_scenario = false;
    }
  }
  prepare_out_dir(out, scenario);
  std::vector<KeptSystem> kept;
  if (same_scenario) {
    kept = kept_systems(others, seeds, out, scenario, kept_network_model(scenario, backend),
                        [&](const ScenarioSystem& system, uint64_t seed) {
                          return run_config(scenario, system, seed, options);
                        });
  }

  runtime::clear_stop_request();
  runtime::StopOnSignals interrupts(backend.cleans_up_after_interrupt()
                                        ? runtime::StopOnSignals::SecondSignal::kWaitForCleanup
                                        : runtime::StopOnSignals::SecondSignal::kExitAtOnce);
  SummaryBuilder summary(scenario, backend, seeds);
  // The kept systems join the summary also when the run is interrupted:
  // their runs are as valid as before, and a summary without them would
  // lose what the folder holds.
  const auto add_kept_systems = [&] {
    if (kept.empty()) return;
    add_kept(summary, kept, file_systems);
    write_summary(out, summary.json());
  };
  try {
    if (options.jobs > 1) {
      run_in_processes(scenario, options, seeds, out, summary);
    } else {
      run_in_turn(scenario, options, backend, seeds, out, summary);
    }
  } catch (const Interrupted&) {
    add_kept_systems();
    throw;
  }
  add_kept_systems();
  print_table(summary.json());
  fmt::print("\nsummary: {}\n", (out / "summary.json").string());
  return summary.json();
}

}  // namespace

nlohmann::ordered_json run_scenario(const RunOptions& options) {
  return run_loaded(load_scenario(options.scenario), options, true);
}

nlohmann::ordered_json run_scenario(const Scenario& scenario, const RunOptions& options) {
  return run_loaded(scenario, options, false);
}

}  // namespace st::apps
