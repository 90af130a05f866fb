// Shared pieces of the ways to run a scenario's runs (apps/run_parts.h).
#include "apps/run_parts.h"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

#include "apps/backends.h"
#include "apps/run_command.h"
#include "apps/scenario.h"

namespace st::apps {

namespace fs = std::filesystem;

// A run's folder inside the output folder: the system's label, and a
// folder per seed when there are several.
std::string run_folder(const std::string& label, uint64_t seed, const std::vector<uint64_t>& seeds) {
  return seeds.size() == 1 ? label : fmt::format("{}/seed-{}", label, seed);
}

// The runs of every system and seed, in summary order.
std::vector<RunJob> plan_jobs(const Scenario& scenario, const std::vector<uint64_t>& seeds) {
  std::vector<RunJob> jobs;
  for (const auto& system : scenario.systems)
    for (const auto seed : seeds) jobs.push_back({system.label, seed, run_folder(system.label, seed, seeds)});
  return jobs;
}

JobsOptions jobs_options(const Scenario& scenario, const RunOptions& options, const fs::path& out,
                         const std::string& backend) {
  JobsOptions how;
  how.program = self_executable();
  how.scenario_file = scenario.source;
  how.out = out;
  how.backend = backend;
  how.jobs = options.jobs;
  how.iterations = options.iterations;
  how.seeds = options.seeds;
  how.seed_list = options.seed_list;
  how.timeline = options.timeline;
  how.quiet = options.quiet;
  how.progress_every_s = options.quiet ? 0 : options.progress_every_s;
  how.mtu = options.mtu;
  how.network = options.network;
  how.stage_sample = options.stage_sample;
  how.label_skew = options.label_skew;
  how.target_accuracy = scenario.target_accuracy;
  how.report_targets = scenario.report_targets;
  how.command = options.job_command;
  return how;
}

void write_file_atomically(const fs::path& path, const std::string& text) {
  const auto temporary = fs::path(path.string() + ".tmp");
  {
    std::ofstream file(temporary);
    if (!file) throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
    file << text;
  }
  fs::rename(temporary, path);
}

void write_summary(const fs::path& out, const nlohmann::ordered_json& summary) {
  write_file_atomically(out / "summary.json", summary.dump(2) + "\n");
}

std::string describe(const RunOutcome& o, const std::string& clock) {
  if (!o.error.empty()) return "failed: " + o.error;
  if (o.timing)
    return fmt::format("timing run: {} iterations in {:.2f} {} s ({:.1f} samples/s), {:.1f} wall s", o.iterations,
                       o.duration_s, clock, o.samples_per_s, o.host_wall_s);
  std::string tta = o.tta_s ? fmt::format("TTA {:.2f} {} s (iteration {})", *o.tta_s, clock, o.tta_iteration.value_or(-1))
                            : "target not reached";
  // The monotone fit's reading where it differs (apps/monotone_fit.h).
  if (o.tta_s && o.tta_fit_s != o.tta_s)
    tta += o.tta_fit_s ? fmt::format(", by the monotone fit {:.2f} s (iteration {})", *o.tta_fit_s, o.tta_fit_iteration.value_or(-1))
                       : ", not reached by the monotone fit";
  return fmt::format("{}, best accuracy {:.2f}%, {} iterations, {:.1f} wall s", tta, 100 * o.best_accuracy,
                     o.iterations, o.host_wall_s);
}

void print_table(const nlohmann::ordered_json& summary) {
  fmt::print("\n{:<16} {:>12} {:>10} {:>9} {:>10} {:>14} {:>12} {:>9}\n", "system", "TTA s", "fit TTA s", "best %",
             "iterations", "WAN bytes", "iter s", "speedup");
  // A missing key and a null both print "-" (a const json's operator[] on
  // a missing key is undefined, so look keys up with find).
  auto number = [](const nlohmann::ordered_json& s, const char* key, const char* format, double scale = 1) {
    const auto v = s.find(key);
    return v == s.end() || v->is_null() ? std::string("-") : fmt::format(fmt::runtime(format), scale * v->get<double>());
  };
  for (const auto& [label, s] : summary.at("systems").items()) {
    if (s.contains("error")) {
      fmt::print("{:<16} failed: {}\n", label, s.at("error").get<std::string>());
      continue;
    }
    if (s.contains("math")) {  // a timing run: no accuracy, no TTA
      fmt::print("{:<16} {:>12} {:>10} {:>9} {:>10} {:>14} {:>12} {:>9} (timing: iteration-time ratio)\n", label, "-", "-", "-",
                 number(s, "iterations", "{:.0f}"), number(s, "wan_bytes", "{:.0f}"),
                 number(s, "mean_iteration_s", "{:.4f}"), number(s, "iteration_speedup_vs_ddp", "{:.2f}x"));
      continue;
    }
    fmt::print("{:<16} {:>12} {:>10} {:>9} {:>10} {:>14} {:>12} {:>9}\n", label, number(s, "tta_s", "{:.2f}"),
               number(s, "tta_fit_s", "{:.2f}"), number(s, "best_accuracy", "{:.2f}", 100), number(s, "iterations", "{:.0f}"),
               number(s, "wan_bytes", "{:.0f}"), number(s, "mean_iteration_s", "{:.4f}"),
               number(s, "speedup_vs_ddp", "{:.2f}x"));
  }
}

}  // namespace st::apps
