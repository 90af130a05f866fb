// `stellatrain sweep SCENARIO --lr 0.02,0.05,0.1 [--momentum ...] [--warmup ...]
// [--density 0.01,0.05,...]`: runs every chosen system of a scenario at every
// combination of the listed settings, evaluating on the validation set (a
// tenth of the training set that no run trains on: tuning never sees the
// test set), then names each system's best setting by time-to-accuracy
// (median over seeds; runs that never reach the target rank after those
// that do, by best accuracy). A best learning rate or density at the edge of
// what was tried extends the grid past it (x2 or /2) and runs again, up to
// three times. TTA benchmarks compare systems at each one's best learning
// rate; this is how the shipped scenarios' per-system optimizer settings
// are found (docs/convergence.md).
//
// --density adds, for the systems with a density (stellatrain, topk-sync:
// SystemOptions::fix_density), fixed-density runs beside the system as the
// scenario has it (for stellatrain: the controller), and reports how the
// scenario's own setting compares with the best fixed density
// (docs/control.md).
#include "apps/sweep_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "apps/backends.h"
#include "apps/plot_command.h"
#include "apps/run_command.h"
#include "apps/scenario.h"
#include "apps/seed_statistics.h"
#include "apps/sweep_grid.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  RunOptions run;
  SweepGrid grid;
  std::vector<std::string> systems;  // labels; empty: all
  int eval_interval = 0;             // > 0: evaluate every this many iterations throughout, in place of the scenario's
  // One point's run (a task of `sweep --slurm`): the scenario's system
  // `point_of` at `point` (lr, momentum, warmup, density), labelled
  // `point_label`, with RunOptions::only_seed.
  std::string point_of, point_label;
  std::vector<double> point;
};

// Each seed's TTA by `tta_key` in seed order: per_seed's when the system ran
// several seeds, else its own; a seed that failed or missed has none.
std::vector<std::optional<double>> per_seed_tta(const nlohmann::ordered_json& s, const std::string& tta_key) {
  const auto value = [&](const nlohmann::ordered_json& j) {
    const auto v = j.value(tta_key, nlohmann::ordered_json());
    return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
  };
  if (!s.contains("per_seed")) return {value(s)};
  std::vector<std::optional<double>> out;
  for (const auto& run : s.at("per_seed")) out.push_back(value(run));
  return out;
}

// The as-is setting's TTA over the best fixed density's, seed by seed: the
// median with a seed where the as-is run missed counting as slowest (as
// summary.json's medians count misses); seeds where the best fixed density
// missed have no ratio. The 95% interval (bootstrap over the pairs) only
// when the as-is run missed no seed.
struct PairedAgainstFixed {
  std::optional<double> ratio;
  std::optional<std::pair<double, double>> ci95;
  int pairs = 0;
  int as_is_missed = 0;
};

PairedAgainstFixed paired_against_fixed(const std::vector<std::optional<double>>& as_is,
                                        const std::vector<std::optional<double>>& best) {
  std::vector<std::optional<double>> ratios;
  PairedAgainstFixed out;
  for (std::size_t i = 0; i < as_is.size() && i < best.size(); ++i) {
    if (!best[i] || *best[i] <= 0) continue;
    if (!as_is[i]) ++out.as_is_missed;
    ratios.push_back(as_is[i] ? std::optional<double>(*as_is[i] / *best[i]) : std::nullopt);
  }
  out.ratio = median_reached(ratios);
  out.pairs = static_cast<int>(ratios.size());
  if (out.as_is_missed == 0) out.ci95 = paired_speedup(as_is, best).ci95;
  return out;
}

// The scenario's own setting (density "as-is", e.g. the controller) against
// the best fixed density at the same optimizer settings, by one reading of
// TTA (`tta_key`): the ratio of their median TTAs and the paired ratio
// (paired_against_fixed: the same trace stretch, data order and weights).
std::optional<nlohmann::ordered_json> against_fixed_by(const std::string& tta_key, const std::string& label,
                                                       const std::vector<Point>& list,
                                                       const nlohmann::ordered_json& summary) {
  const auto& systems = summary.at("systems");
  std::optional<std::size_t> own, best_fixed;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].setting.density == 0)
      own = i;
    else if (!best_fixed || better(systems.at(list[i].label), systems.at(list[*best_fixed].label), tta_key.c_str()))
      best_fixed = i;
  }
  if (!own || !best_fixed) return std::nullopt;
  const auto& a = systems.at(list[*own].label);
  const auto& b = systems.at(list[*best_fixed].label);
  const auto a_tta = a.value(tta_key, nlohmann::ordered_json()), b_tta = b.value(tta_key, nlohmann::ordered_json());
  const double density = list[*best_fixed].setting.density;
  nlohmann::ordered_json compare = {
      {"best_fixed_density", density}, {"best_fixed_" + tta_key, b_tta}, {"as_is_" + tta_key, a_tta}};
  if (a_tta.is_number() && b_tta.is_number()) compare["as_is_over_best_fixed"] = a_tta.get<double>() / b_tta.get<double>();
  const auto paired = paired_against_fixed(per_seed_tta(a, tta_key), per_seed_tta(b, tta_key));
  compare["paired_ratio"] = optional_number(paired.ratio);
  compare["paired_ci95"] = interval_json(paired.ci95);
  compare["pairs"] = paired.pairs;
  compare["as_is_missed"] = paired.as_is_missed;
  fmt::print("{:<14} as the scenario has it, by the {}: TTA {} the best fixed density ({}), paired over {} seed(s){}\n",
             label, tta_key == "tta_s" ? "first evaluation" : "monotone fit",
             paired.ratio ? fmt::format("{:.2f}x", *paired.ratio) : std::string("-"), density, paired.pairs,
             paired.as_is_missed > 0 ? fmt::format(", {} missed the target", paired.as_is_missed) : std::string());
  return compare;
}

// Both readings (apps/monotone_fit.h): the first evaluation at the target,
// and the monotone fit's, which one lucky evaluation does not decide.
void report_against_fixed(const std::string& label, const std::vector<Point>& list,
                          const nlohmann::ordered_json& summary, nlohmann::ordered_json& out) {
  auto compare = against_fixed_by("tta_s", label, list, summary);
  if (!compare) return;
  if (auto fit = against_fixed_by("tta_fit_s", label, list, summary)) (*compare)["fit"] = *fit;
  out["against_fixed"] = *compare;
}

// The system at one setting, evaluated on the validation set.
ScenarioSystem at_setting(const ScenarioSystem& system, const Setting& setting, const SweepOptions& options) {
  ScenarioSystem copy = system;
  copy.config.lr = setting.lr;
  copy.config.momentum = setting.momentum;
  copy.config.warmup_iterations = setting.warmup;
  if (setting.density > 0) copy.config.options->fix_density(setting.density);
  copy.label = setting_label(system.label, setting, options.grid);
  copy.config.label = copy.label;
  copy.config.evaluate_on = "validation";  // tuning never sees the test set
  // A coarser grain for tuning (every point at the same one): cheaper, and
  // a ranking needs less resolution than a reported TTA.
  if (options.eval_interval > 0) {
    copy.config.eval_interval = options.eval_interval;
    copy.config.eval_interval_after = 0;
  }
  train::validate(copy.config);
  return copy;
}

// A task of `sweep --slurm`: one point's run with one seed, into the folder
// the submitting sweep prepared (run's single-job path).
void run_point(const SweepOptions& options) {
  Scenario scenario = load_scenario(options.run.scenario);
  const auto original = std::find_if(scenario.systems.begin(), scenario.systems.end(),
                                     [&](const ScenarioSystem& s) { return s.label == options.point_of; });
  if (original == scenario.systems.end() || options.point.size() != 4)
    throw std::invalid_argument(fmt::format("--point-of {}: no such system in {}, or --point is not LR,MOMENTUM,WARMUP,DENSITY",
                                            options.point_of, scenario.source));
  const Setting setting{options.point[0], options.point[1], static_cast<int>(options.point[2]), options.point[3]};
  ScenarioSystem point = at_setting(*original, setting, options);
  point.label = point.config.label = options.point_label;
  scenario.systems = {point};
  RunOptions run = options.run;
  run.only_system = options.point_label;
  (void)run_scenario(scenario, run);
}

// How a task of `sweep --slurm` runs `job` (a point's label and a seed).
using PointSettings = std::map<std::string, std::pair<std::string, Setting>>;  // label -> (system, setting)

std::function<std::vector<std::string>(const RunJob&)> point_command(const SweepOptions& options,
                                                                     std::shared_ptr<const PointSettings> points) {
  const std::string program = self_executable();
  const std::string scenario = fs::absolute(options.run.scenario).lexically_normal().string();
  const std::string out = fs::absolute(options.run.out_dir).lexically_normal().string();
  return [=](const RunJob& job) {
    const auto& [of, s] = points->at(job.label);
    std::vector<std::string> args{program,        "sweep", scenario, "--out", out, "--point-of", of, "--point-label",
                                  // Hexadecimal floats: the task gets the very same doubles.
                                  job.label,      "--point", fmt::format("{:a},{:a},{},{:a}", s.lr, s.momentum, s.warmup, s.density),
                                  "--only-seed", std::to_string(job.seed)};
    if (options.run.quiet) args.push_back("--quiet");  // as run's children: progress in their logs otherwise
    if (!options.run.backend.empty()) args.insert(args.end(), {"--backend", options.run.backend});
    if (options.run.seeds > 0) args.insert(args.end(), {"--seeds", std::to_string(options.run.seeds)});
    if (!options.run.seed_list.empty())
      args.insert(args.end(), {"--seed-list", fmt::format("{}", fmt::join(options.run.seed_list, ","))});
    if (options.run.iterations > 0) args.insert(args.end(), {"--iterations", std::to_string(options.run.iterations)});
    if (options.eval_interval > 0) args.insert(args.end(), {"--eval-interval", std::to_string(options.eval_interval)});
    return args;
  };
}

nlohmann::ordered_json sweep(const SweepOptions& given) {
  SweepOptions options = given;
  Scenario scenario = load_scenario(options.run.scenario);
  const std::vector<ScenarioSystem> originals_list = systems_labelled(scenario, options.systems);
  std::map<std::string, std::vector<Point>> points;  // by original label
  std::map<std::string, const ScenarioSystem*> original_of;
  std::vector<ScenarioSystem> round;
  for (const auto& system : originals_list) {
    original_of[system.label] = &system;
    for (const auto& setting : grid(options.grid, system.config)) {
      round.push_back(at_setting(system, setting, options));
      points[system.label].push_back({setting, round.back().label});
    }
  }
  const std::size_t originals = points.size();
  // --slurm: each point's tasks rebuild it from the command line.
  auto point_settings = std::make_shared<PointSettings>();
  for (const auto& [label, list] : points)
    for (const auto& p : list) (*point_settings)[p.label] = {label, p.setting};
  if (options.run.slurm.enabled) {
    options.run.slurm_settings = {{"command", "sweep"}, {"eval_interval", options.eval_interval}};
    options.run.job_command = point_command(options, point_settings);
  }
  nlohmann::ordered_json summary;  // every round's runs
  constexpr int kMaxExtensions = 3;
  for (int extension = 0; !round.empty(); ++extension) {
    scenario.systems = round;
    spdlog::info("sweep{}: {} run(s) per seed, evaluated on the validation set",
                 extension == 0 ? "" : fmt::format(" (grid extended past its edge, round {})", extension),
                 scenario.systems.size());
    const auto ran = run_scenario(scenario, options.run);
    if (slurm_pending(ran)) {
      fmt::print("sweep: round {} is still running on Slurm; run the same command again to go on\n", extension + 1);
      return ran;
    }
    if (summary.is_null()) summary = ran;
    for (const auto& [label, entry] : ran["systems"].items()) summary["systems"][label] = entry;
    round.clear();
    if (extension == kMaxExtensions) break;
    for (auto& [label, list] : points) {
      const Point* best = nullptr;
      for (const auto& p : list)
        if (!best || better(summary["systems"][p.label], summary["systems"][best->label])) best = &p;
      for (const auto& setting : beyond_the_edge(list, *best)) {
        round.push_back(at_setting(*original_of.at(label), setting, options));
        list.push_back({setting, round.back().label});
        (*point_settings)[round.back().label] = {label, setting};
      }
    }
  }
  spdlog::info("sweep: {} system(s), {} run(s) per seed in all", originals, summary["systems"].size());
  nlohmann::ordered_json result = {{"scenario", scenario.source},
                                   {"target_accuracy", scenario.target_accuracy},
                                   {"evaluated_on", "validation (a tenth of the training set, held out of training)"},
                                   {"eval_interval", options.eval_interval > 0
                                                         ? nlohmann::ordered_json(options.eval_interval)
                                                         : nlohmann::ordered_json("the scenario's")}};
  nlohmann::ordered_json systems = nlohmann::ordered_json::object();
  fmt::print("\n{:<14} {:>8} {:>9} {:>7} {:>8} {:>10} {:>11} {:>9}\n", "system", "lr", "momentum", "warmup",
             "density", "TTA s", "iterations", "best %");
  for (const auto& [label, list] : points) {
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& s = summary.at("systems").at(list[i].label);
      if (!best || better(s, summary["systems"][list[*best].label])) best = i;
      nlohmann::ordered_json entry = {{"lr", list[i].setting.lr},
                                      {"momentum", list[i].setting.momentum},
                                      {"warmup", list[i].setting.warmup},
                                      {"density", list[i].setting.density > 0 ? nlohmann::ordered_json(list[i].setting.density)
                                                                              : nlohmann::ordered_json("as-is")},
                                      {"run", list[i].label}};
      for (const char* key : {"tta_s", "tta_iteration", "tta_fit_s", "tta_fit_iteration", "best_accuracy", "error"})
        if (s.contains(key)) entry[key] = s[key];
      entries.push_back(entry);
      const auto cell = [&](const char* key, const char* format, double scale) {
        return !s.contains(key) || s[key].is_null() ? std::string("-")
                                                    : fmt::format(fmt::runtime(format), scale * s[key].get<double>());
      };
      fmt::print("{:<14} {:>8} {:>9} {:>7} {:>8} {:>10} {:>11} {:>9}\n", label, list[i].setting.lr,
                 list[i].setting.momentum, list[i].setting.warmup,
                 list[i].setting.density > 0 ? fmt::format("{}", list[i].setting.density) : std::string("as-is"),
                 cell("tta_s", "{:.2f}", 1), cell("tta_iteration", "{:.0f}", 1), cell("best_accuracy", "{:.2f}", 100));
    }
    const auto& chosen = list[*best];
    systems[label] = {{"best", {{"lr", chosen.setting.lr},
                                {"momentum", chosen.setting.momentum},
                                {"warmup", chosen.setting.warmup},
                                {"run", chosen.label}}},
                      {"points", entries}};
    fmt::print("{:<14} best: lr {} momentum {} warmup {}{}\n", label, chosen.setting.lr, chosen.setting.momentum,
               chosen.setting.warmup,
               options.grid.densities.empty() ? std::string()
                                         : " density " + (chosen.setting.density > 0 ? fmt::format("{}", chosen.setting.density)
                                                                                    : std::string("as-is")));
    if (!options.grid.densities.empty()) report_against_fixed(label, list, summary, systems[label]);
  }
  result["systems"] = systems;
  const fs::path out = options.run.out_dir.empty() ? fs::path("results") / (scenario.name + "-sweep")
                                                   : fs::path(options.run.out_dir);
  std::ofstream(out / "sweep.json") << result.dump(2) << "\n";
  std::ofstream(out / "summary.json") << summary.dump(2) << "\n";  // every round's runs, for `stellatrain plot`
  fmt::print("\nsweep: {}\n", (out / "sweep.json").string());
  return result;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep", "Run a scenario's systems over a grid of optimizer settings and name each system's best by TTA");
  cmd->add_option("scenario", options->run.scenario, "Scenario YAML (docs/scenarios.md)")->required();
  cmd->add_option("--lr", options->grid.lrs, "Learning rates to try (comma-separated)")->delimiter(',');
  cmd->add_option("--momentum", options->grid.momenta, "Momenta to try")->delimiter(',');
  cmd->add_option("--warmup", options->grid.warmups, "Warmup lengths (iterations) to try")->delimiter(',');
  cmd->add_option("--density", options->grid.densities,
                  "Fixed densities to try beside the scenario's own setting (stellatrain, topk-sync)")
      ->delimiter(',');
  cmd->add_option("--systems", options->systems, "Only these system labels (default: all)")->delimiter(',');
  cmd->add_option("--backend", options->run.backend, "sim or real (default: the scenario's)");
  cmd->add_option("--out", options->run.out_dir, "Results folder (default: results/<scenario name>-sweep)");
  auto* count =
      cmd->add_option("--seeds", options->run.seeds, "Run this many seeds (default: the scenario's)")->check(CLI::Range(1, 1000));
  add_seed_list_option(cmd, options->run.seed_list, count,
                       "Run exactly these seeds (comma-separated), in place of the scenario's seeds list");
  cmd->add_option("--iterations", options->run.iterations,
                  "Run every point for this many iterations instead of the scenario's budget (shorter tuning runs)")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--eval-interval", options->eval_interval,
                  "Evaluate every point every this many iterations (default: the scenario's eval settings)")
      ->check(CLI::Range(1, 10000000));
  cmd->add_flag("--quiet", options->run.quiet, "Only the runner's lines");
  cmd->add_flag("--plot", options->run.plot, "Draw the figures of every point (`stellatrain plot OUT`) at the end");
  add_slurm_options(cmd, options->run.slurm);
  // A `sweep --slurm` task runs one point with these; not for users.
  cmd->add_option("--point-of", options->point_of)->group("");
  cmd->add_option("--point-label", options->point_label)->group("");
  cmd->add_option("--point", options->point)->delimiter(',')->group("");
  cmd->add_option("--only-seed", options->run.only_seed)->group("");
  cmd->callback([options] {
    if (!options->point_of.empty()) return run_point(*options);
    if (options->grid.lrs.empty() && options->grid.momenta.empty() && options->grid.warmups.empty() && options->grid.densities.empty())
      throw std::invalid_argument("sweep: give at least one of --lr, --momentum, --warmup, --density");
    for (double d : options->grid.densities)
      if (!(d > 0 && d <= 1)) throw std::invalid_argument(fmt::format("--density: {} is outside (0, 1]", d));
    if (options->run.out_dir.empty())
      options->run.out_dir = (fs::path("results") / (load_scenario(options->run.scenario).name + "-sweep")).string();
    const auto result = sweep(*options);
    if (options->run.plot && !slurm_pending(result)) plot_results_folder(options->run.out_dir);
  });
}

}  // namespace st::apps
