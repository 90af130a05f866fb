#pragma once
// What `stellatrain run` writes to summary.json: per run, the numbers read
// back from the run's folder (eval.csv, manifest.json); per system, the
// median time to accuracy over seeds at the target and at every report
// target, and the median paired speedup over ddp with its 95% interval
// (apps/seed_statistics.h). The shape is the contract with
// analysis/plot_run.py (docs/runner.md, "summary.json").
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps/scenario.h"

namespace st::train {
class Backend;
}

namespace st::apps {

struct RunOutcome {
  uint64_t seed = 0;
  std::string dir;               // relative to the output folder
  std::optional<double> tta_s;   // first evaluation at or above the target (none: never)
  std::optional<int> tta_iteration;
  // The first evaluation at which the monotone fit of the run's evaluations
  // reaches the target (apps/monotone_fit.h), and how many evaluations
  // follow it: a crossing near the run's end rests on few of them.
  std::optional<double> tta_fit_s;
  std::optional<int> tta_fit_iteration;
  int evaluations_after_fit = 0;
  // The same at each of the scenario's report targets (the target among them).
  std::map<double, std::optional<double>> tta_at;
  double trace_offset_s = 0;     // where the run's traces started (its seed's)
  double best_accuracy = 0;
  double final_accuracy = 0;
  int iterations = 0;            // the last evaluation's (the run's completed iterations)
  std::optional<double> wan_bytes;  // wire bytes on all WAN directions (sim only)
  // Bytes each cluster sent over the WAN until the target was reached
  // (from link.csv; empty without one or without a TTA).
  std::map<std::string, double> egress_to_target_bytes;
  double mean_iteration_s = 0;
  double duration_s = 0;         // the run's length on its clock
  double host_wall_s = 0;        // progress lines only: it would make summary.json non-deterministic
  std::string error;             // non-empty: the run failed with this message
  // A timing run (compute math: timing) has no evaluations: no accuracy and
  // no TTA, only time, traffic and throughput.
  bool timing = false;
  double samples_per_s = 0;      // global batch x iterations / duration
  // The system's own totals (averaging rounds, staleness; see
  // System::stats), copied from the run's manifest.
  nlohmann::json system_stats;
};

// summary.json's numbers: an integer where the value is one, null for
// nothing; a 95% interval as [low, high] or null.
nlohmann::ordered_json number(double value);
nlohmann::ordered_json optional_number(const std::optional<double>& value);
nlohmann::ordered_json interval_json(const std::optional<std::pair<double, double>>& ci);

// A JSON file (a run's manifest.json, a results folder's summary.json).
// Throws std::runtime_error naming the file.
nlohmann::json read_json_file(const std::string& path);

// Reads DIR/eval.csv (TTA from its rows, in iteration order, at `target`
// and at each of `report_targets`) and DIR/manifest.json (the mean
// iteration time among its numbers). Throws std::runtime_error naming the
// file and line.
RunOutcome read_outcome(const std::string& dir, const std::string& relative_dir, uint64_t seed, double target,
                        const std::vector<double>& report_targets = {});

class SummaryBuilder {
 public:
  SummaryBuilder(const Scenario& scenario, const train::Backend& backend, const std::vector<uint64_t>& seeds);
  void add_system(const ScenarioSystem& system, const std::vector<RunOutcome>& outcomes);
  // Puts the systems in the order of `labels` (those not named last).
  void order_as(const std::vector<std::string>& labels);
  // Picks the speedup reference among `systems` (the constructor picks it
  // among the scenario's; a run of some systems beside kept ones picks it
  // among all of them, apps/run_keep.h).
  void choose_reference(const std::vector<ScenarioSystem>& systems);
  // Whether a system of this label has been added.
  bool has_system(const std::string& label) const;
  // The summary so far, speedups included.
  nlohmann::ordered_json json() const;

 private:
  void add_cost(nlohmann::ordered_json& v, const std::optional<double>& tta_s, const std::vector<RunOutcome>& outcomes) const;
  struct SystemEntry {
    std::string label;
    nlohmann::ordered_json value;
    std::optional<double> tta_s;              // the median over seeds
    std::optional<double> tta_lower_bound_s;  // the median of TTA or, when never reached, the run's length
    std::vector<std::optional<double>> tta_fit_per_seed;  // the monotone fit's reading, seed order
    double mean_iteration_s = 0;              // timing runs
    // Per report target, each seed's TTA in seed order (the pairs of the
    // paired speedups).
    std::map<double, std::vector<std::optional<double>>> tta_per_seed;
  };
  nlohmann::ordered_json speedups(const SystemEntry& system, const SystemEntry& reference) const;
  nlohmann::ordered_json top_;
  double target_ = 0;
  std::vector<double> report_targets_;  // ascending, the target among them
  std::string reference_;  // the speedup reference's label (ddp; "" when the scenario has none)
  double cost_per_hour_ = 0;
  std::map<std::string, double> egress_per_gb_;  // by cluster name
  bool has_wan_ = false;
  std::vector<SystemEntry> systems_;
};

}  // namespace st::apps
