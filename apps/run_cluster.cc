#include "apps/run_cluster.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "apps/interrupt.h"
#include "apps/run_command.h"
#include "apps/run_parts.h"
#include "apps/scenario.h"
#include "core/runtime/stop_request.h"
#include "core/train/run/backend.h"
#include "core/util/file_fingerprint.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// --slurm keeps a folder's finished runs: the folder must be new, empty or
// earlier results of ours.
void check_slurm_out_dir(const fs::path& out) {
  if (fs::exists(out) && !fs::is_directory(out))
    throw std::invalid_argument(fmt::format("--out {}: exists and is not a folder", out.string()));
  if (fs::exists(out) && !fs::is_empty(out) && !fs::exists(out / "scenario.yaml") && !fs::exists(out / "slurm"))
    throw std::invalid_argument(fmt::format(
        "--out {}: the folder is not empty and holds no earlier `stellatrain` results; choose another", out.string()));
}

// What must not change between the submissions that fill one folder.
nlohmann::json slurm_settings(const Scenario& scenario, const RunOptions& options, const train::Backend& backend,
                              const std::vector<uint64_t>& seeds) {
  nlohmann::json s = options.slurm_settings;
  if (!s.contains("command")) s["command"] = "run";
  s["scenario"] = fs::absolute(scenario.source).lexically_normal().string();
  s["scenario_crc32"] = util::fingerprint_file(scenario.source).crc32;
  s["backend"] = backend.name();
  s["seeds"] = seeds;
  s["iterations"] = options.iterations;
  s["mtu"] = options.mtu;
  s["network"] = options.network;
  s["stage_sample"] = options.stage_sample;
  s["timeline"] = options.timeline;
  if (options.label_skew >= 0) s["label_skew"] = options.label_skew;  // absent when not given: older folders still match
  if (!options.systems.empty()) s["systems"] = options.systems;  // absent when all run: older folders still match
  return s;
}

// Every run's outcome, finished or why not, by system.
nlohmann::ordered_json merge(const Scenario& scenario, const train::Backend& backend, const std::vector<uint64_t>& seeds,
                             const std::vector<RunJob>& jobs, const JobsOptions& how, const fs::path& out) {
  SummaryBuilder summary(scenario, backend, seeds);
  std::size_t i = 0;
  for (const auto& system : scenario.systems) {
    std::vector<RunOutcome> outcomes;
    for (std::size_t s = 0; s < seeds.size(); ++s, ++i) {
      const auto& job = jobs[i];
      RunOutcome o;
      if (job_succeeded(how.out, job)) {
        o = collect_job(job, how, "", 0);
      } else {
        o.seed = job.seed;
        o.dir = job.relative;
        o.error = slurm_job_failure(how.out, job) + "; run the same command again to resubmit it";
      }
      spdlog::info("{} seed {}: {}", system.label, o.seed, describe(o, backend.simulated() ? "simulated" : "wall"));
      outcomes.push_back(o);
    }
    summary.add_system(system, outcomes);
  }
  write_summary(out, summary.json());
  return summary.json();
}

}  // namespace

nlohmann::ordered_json run_on_cluster(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                      const std::vector<uint64_t>& seeds, const fs::path& out) {
  if (backend.name() == "emu")
    throw std::invalid_argument("--slurm: the emu backend builds its network namespaces on one host as root; use sim "
                                "or real");
  if (options.jobs > 1) throw std::invalid_argument("--slurm and --jobs: choose one (Slurm runs the runs side by side)");
  for (const auto& system : scenario.systems)
    if (system.label == "logs" || system.label == "slurm")
      throw std::invalid_argument(fmt::format("--slurm: a system labelled '{}' would share OUT/{}; give it another "
                                              "label", system.label, system.label));
  // Checked before anything in the folder changes: a refused rerun leaves it as it was.
  check_slurm_out_dir(out);
  check_slurm_settings(out, slurm_settings(scenario, options, backend, seeds));
  fs::copy_file(scenario.source, out / "scenario.yaml", fs::copy_options::overwrite_existing);
  JobsOptions how = jobs_options(scenario, options, fs::absolute(out).lexically_normal(), backend.name());
  how.scenario_file = fs::absolute(scenario.source).lexically_normal().string();
  const auto jobs = plan_jobs(scenario, seeds);
  runtime::clear_stop_request();
  runtime::StopOnSignals interrupts;
  const SlurmProgress progress = run_on_slurm(jobs, how, options.slurm, scenario.name);
  if (!progress.finished()) {
    nlohmann::ordered_json pending;
    pending["slurm"] = {{"waiting", progress.waiting}, {"done", progress.done}, {"submitted", progress.submitted}};
    fmt::print("\nslurm: {} run(s) queued or running, {} done; run the same command again to merge them into {}\n",
               progress.waiting, progress.done, (out / "summary.json").string());
    if (const int signal = runtime::stop_requested(); signal != 0) throw Interrupted(signal);
    return pending;
  }
  return merge(scenario, backend, seeds, jobs, how, out);
}

}  // namespace st::apps
