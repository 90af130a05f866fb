// `stellatrain sweep SCENARIO --lr 0.02,0.05,0.1 [--momentum ...] [--warmup ...]
// [--density 0.01,0.05,...]`: runs every chosen system of a scenario at every
// combination of the listed settings, then names each system's best setting
// by time-to-accuracy (mean over seeds; runs that never reach the target
// rank after those that do, by best accuracy). TTA benchmarks compare systems
// at each one's best learning rate; this is how the shipped scenarios'
// per-system optimizer settings were found (docs/convergence.md).
//
// --density adds, for stellatrain and topk-sync, fixed-density runs
// (controller off) beside the system as the scenario has it (for stellatrain:
// the controller), and reports how the scenario's own setting compares with
// the best fixed density (docs/control.md).
#include "apps/sweep_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "apps/run_command.h"
#include "apps/scenario.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

struct SweepOptions {
  RunOptions run;
  std::vector<double> lrs, momenta, densities;
  std::vector<int> warmups;
  std::vector<std::string> systems;  // labels; empty: all
};

struct Setting {
  double lr = 0, momentum = 0;
  int warmup = 0;
  double density = 0;  // 0: as the scenario has it (for stellatrain, the controller's choice)
};

// Labels name folders: letters, digits, '-', '_' and '.'; only the swept
// dimensions appear.
std::string setting_label(const std::string& system, const Setting& s, const SweepOptions& o) {
  std::string label = system;
  if (!o.lrs.empty()) label += fmt::format(".lr-{}", s.lr);
  if (!o.momenta.empty()) label += fmt::format(".m-{}", s.momentum);
  if (!o.warmups.empty()) label += fmt::format(".w-{}", s.warmup);
  if (!o.densities.empty()) label += s.density > 0 ? fmt::format(".d-{}", s.density) : std::string(".as-is");
  return label;
}

bool sparse(const train::TrainConfig& c) { return c.system == "stellatrain" || c.system == "topk-sync"; }

std::vector<Setting> grid(const SweepOptions& o, const train::TrainConfig& base) {
  const auto lrs = o.lrs.empty() ? std::vector<double>{base.lr} : o.lrs;
  const auto momenta = o.momenta.empty() ? std::vector<double>{base.momentum} : o.momenta;
  const auto warmups = o.warmups.empty() ? std::vector<int>{base.warmup_iterations} : o.warmups;
  std::vector<double> densities{0};
  if (sparse(base)) densities.insert(densities.end(), o.densities.begin(), o.densities.end());
  std::vector<Setting> out;
  for (double lr : lrs)
    for (double m : momenta)
      for (int w : warmups)
        for (double d : densities) out.push_back({lr, m, w, d});
  return out;
}

struct Point {
  Setting setting;
  std::string label;
};

// Better: reaches the target sooner; among runs that never reach it, higher
// best accuracy.
bool better(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  if (a.contains("error")) return false;
  if (b.contains("error")) return true;
  const bool a_reached = !a["tta_s"].is_null(), b_reached = !b["tta_s"].is_null();
  if (a_reached != b_reached) return a_reached;
  if (a_reached) return a["tta_s"].get<double>() < b["tta_s"].get<double>();
  return a["best_accuracy"].get<double>() > b["best_accuracy"].get<double>();
}

// The scenario's own setting (density "as-is", e.g. the controller) against
// the best fixed density at the same optimizer settings: their TTA ratio.
void report_against_fixed(const std::string& label, const std::vector<Point>& list,
                          const nlohmann::ordered_json& summary, nlohmann::ordered_json& out) {
  std::optional<std::size_t> own, best_fixed;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& s = summary["systems"][list[i].label];
    if (list[i].setting.density == 0) {
      own = i;
    } else if (!best_fixed || better(s, summary["systems"][list[*best_fixed].label])) {
      best_fixed = i;
    }
  }
  if (!own || !best_fixed) return;
  const auto& a = summary["systems"][list[*own].label];
  const auto& b = summary["systems"][list[*best_fixed].label];
  nlohmann::ordered_json compare = {{"best_fixed_density", list[*best_fixed].setting.density},
                                    {"best_fixed_tta_s", b.value("tta_s", nlohmann::ordered_json())},
                                    {"as_is_tta_s", a.value("tta_s", nlohmann::ordered_json())}};
  if (a.contains("tta_s") && b.contains("tta_s") && !a["tta_s"].is_null() && !b["tta_s"].is_null()) {
    const double ratio = a["tta_s"].get<double>() / b["tta_s"].get<double>();
    compare["as_is_over_best_fixed"] = ratio;
    fmt::print("{:<14} as the scenario has it: TTA {:.2f}x the best fixed density ({})\n", label, ratio,
               list[*best_fixed].setting.density);
  }
  out["against_fixed"] = compare;
}

nlohmann::ordered_json sweep(const SweepOptions& options) {
  Scenario scenario = load_scenario(options.run.scenario);
  for (const auto& label : options.systems) {
    const bool known = std::any_of(scenario.systems.begin(), scenario.systems.end(),
                                   [&](const ScenarioSystem& s) { return s.label == label; });
    if (!known) throw std::invalid_argument(fmt::format("--systems: {} has no system labelled '{}'", scenario.source, label));
  }
  std::vector<ScenarioSystem> expanded;
  std::map<std::string, std::vector<Point>> points;  // by original label
  for (const auto& system : scenario.systems) {
    const bool chosen = options.systems.empty() ||
                        std::find(options.systems.begin(), options.systems.end(), system.label) != options.systems.end();
    if (!chosen) continue;
    for (const auto& setting : grid(options, system.config)) {
      ScenarioSystem copy = system;
      copy.config.lr = setting.lr;
      copy.config.momentum = setting.momentum;
      copy.config.warmup_iterations = setting.warmup;
      if (setting.density > 0) {
        copy.config.density = setting.density;
        copy.config.controller = false;
      }
      copy.label = setting_label(system.label, setting, options);
      train::validate(copy.config);
      points[system.label].push_back({setting, copy.label});
      expanded.push_back(std::move(copy));
    }
  }
  const std::size_t originals = points.size();
  scenario.systems = std::move(expanded);
  spdlog::info("sweep: {} system(s) x {} setting(s) = {} runs per seed", originals,
               scenario.systems.size() / std::max<std::size_t>(1, originals), scenario.systems.size());
  const auto summary = run_scenario(scenario, options.run);

  nlohmann::ordered_json result = {{"scenario", scenario.source}, {"target_accuracy", scenario.target_accuracy}};
  nlohmann::ordered_json systems = nlohmann::ordered_json::object();
  fmt::print("\n{:<14} {:>8} {:>9} {:>7} {:>8} {:>10} {:>11} {:>9}\n", "system", "lr", "momentum", "warmup",
             "density", "TTA s", "iterations", "best %");
  for (const auto& [label, list] : points) {
    nlohmann::ordered_json entries = nlohmann::ordered_json::array();
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto& s = summary["systems"][list[i].label];
      if (!best || better(s, summary["systems"][list[*best].label])) best = i;
      nlohmann::ordered_json entry = {{"lr", list[i].setting.lr},
                                      {"momentum", list[i].setting.momentum},
                                      {"warmup", list[i].setting.warmup},
                                      {"density", list[i].setting.density > 0 ? nlohmann::ordered_json(list[i].setting.density)
                                                                              : nlohmann::ordered_json("as-is")},
                                      {"run", list[i].label}};
      for (const char* key : {"tta_s", "tta_iteration", "best_accuracy", "error"})
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
               options.densities.empty() ? std::string()
                                         : " density " + (chosen.setting.density > 0 ? fmt::format("{}", chosen.setting.density)
                                                                                    : std::string("as-is")));
    if (!options.densities.empty()) report_against_fixed(label, list, summary, systems[label]);
  }
  result["systems"] = systems;
  const fs::path out = options.run.out_dir.empty() ? fs::path("results") / (scenario.name + "-sweep")
                                                   : fs::path(options.run.out_dir);
  std::ofstream(out / "sweep.json") << result.dump(2) << "\n";
  fmt::print("\nsweep: {}\n", (out / "sweep.json").string());
  return result;
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  auto* cmd = app.add_subcommand(
      "sweep", "Run a scenario's systems over a grid of optimizer settings and name each system's best by TTA");
  cmd->add_option("scenario", options->run.scenario, "Scenario YAML (docs/scenarios.md)")->required();
  cmd->add_option("--lr", options->lrs, "Learning rates to try (comma-separated)")->delimiter(',');
  cmd->add_option("--momentum", options->momenta, "Momenta to try")->delimiter(',');
  cmd->add_option("--warmup", options->warmups, "Warmup lengths (iterations) to try")->delimiter(',');
  cmd->add_option("--density", options->densities,
                  "Fixed densities to try beside the scenario's own setting (stellatrain, topk-sync)")
      ->delimiter(',');
  cmd->add_option("--systems", options->systems, "Only these system labels (default: all)")->delimiter(',');
  cmd->add_option("--backend", options->run.backend, "sim or real (default: the scenario's)");
  cmd->add_option("--out", options->run.out_dir, "Results folder (default: results/<scenario name>-sweep)");
  cmd->add_option("--seeds", options->run.seeds, "Run this many seeds (default: the scenario's)")->check(CLI::Range(1, 1000));
  cmd->add_flag("--quiet", options->run.quiet, "Only the runner's lines");
  cmd->callback([options] {
    if (options->lrs.empty() && options->momenta.empty() && options->warmups.empty() && options->densities.empty())
      throw std::invalid_argument("sweep: give at least one of --lr, --momentum, --warmup, --density");
    for (double d : options->densities)
      if (!(d > 0 && d <= 1)) throw std::invalid_argument(fmt::format("--density: {} is outside (0, 1]", d));
    if (options->run.out_dir.empty())
      options->run.out_dir = (fs::path("results") / (load_scenario(options->run.scenario).name + "-sweep")).string();
    (void)sweep(*options);
  });
}

}  // namespace st::apps
