#include "apps/run_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "apps/monotone_fit.h"
#include "apps/seed_statistics.h"
#include "core/train/run/backend.h"
#include "core/train/system_registry.h"

namespace st::apps {

// A mean that stays an integer in the JSON when it is one (one seed).
nlohmann::ordered_json number(double value) {
  if (value == std::floor(value) && std::abs(value) < 9e15) return static_cast<int64_t>(value);
  return value;
}

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
  return value ? number(*value) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json interval_json(const std::optional<std::pair<double, double>>& ci) {
  return ci ? nlohmann::ordered_json::array({ci->first, ci->second}) : nlohmann::ordered_json(nullptr);
}

namespace {

struct EvalRow {
  double time_s = 0;
  int iteration = 0;
  double accuracy = 0;
};

double cell_number(const std::string& cell, const std::string& path, int line) {
  try {
    std::size_t used = 0;
    const double value = std::stod(cell, &used);
    if (used == cell.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw std::runtime_error(fmt::format("{}: line {}: '{}' is not a number", path, line, cell));
}

// eval.csv as the trainer writes it: time_s,iteration,accuracy,loss,samples.
std::vector<EvalRow> read_eval_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the file", path));
  std::vector<EvalRow> rows;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (line == 1 || text.empty()) continue;  // the header
    std::vector<std::string> cells;
    std::stringstream stream(text);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    if (cells.size() < 3) throw std::runtime_error(fmt::format("{}: line {}: expected time_s,iteration,accuracy,...", path, line));
    rows.push_back({cell_number(cells[0], path, line), static_cast<int>(cell_number(cells[1], path, line)),
                    cell_number(cells[2], path, line)});
  }
  // Evaluations run asynchronously and may finish out of order.
  std::stable_sort(rows.begin(), rows.end(), [](const EvalRow& a, const EvalRow& b) { return a.iteration < b.iteration; });
  return rows;
}

// link.csv (second,link,configured_mbps,delivered_mbps,delivered_bytes):
// the bytes each direction's source cluster delivered in the seconds before
// `until_s`, by cluster name ("a->b" counts for a). Empty when there is no file.
std::map<std::string, double> egress_before(const std::string& path, double until_s) {
  std::map<std::string, double> out;
  std::ifstream in(path);
  if (!in) return out;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (line == 1 || text.empty()) continue;
    std::vector<std::string> cells;
    std::stringstream stream(text);
    for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
    if (cells.size() < 5) throw std::runtime_error(fmt::format("{}: line {}: expected 5 columns", path, line));
    const double second = cell_number(cells[0], path, line);
    const auto arrow = cells[1].find("->");
    if (arrow == std::string::npos) throw std::runtime_error(fmt::format("{}: line {}: link '{}' is not FROM->TO", path, line, cells[1]));
    if (second < until_s) out[cells[1].substr(0, arrow)] += cell_number(cells[4], path, line);
  }
  return out;
}

// The mean over outcomes of `field`, or nothing when any outcome lacks it.
template <typename Get>
std::optional<double> mean_of(const std::vector<RunOutcome>& outcomes, Get get) {
  double sum = 0;
  for (const auto& o : outcomes) {
    const std::optional<double> value = get(o);
    if (!value) return std::nullopt;
    sum += *value;
  }
  return sum / static_cast<double>(outcomes.size());
}

// "0.85": a target as summary.json's keys name it.
std::string target_key(double target) { return fmt::format("{}", target); }

// The monotone fit's reading of a system's runs (apps/monotone_fit.h): the
// medians over seeds, as tta_s's, and the fewest evaluations after a
// seed's crossing (how little the weakest-founded reading rests on).
// Returns each seed's reading, in seed order (the pairs of the fit's speedup).
std::vector<std::optional<double>> write_fit_reading(nlohmann::ordered_json& v, const std::vector<RunOutcome>& outcomes) {
  std::vector<std::optional<double>> fit, iteration;
  std::optional<int> fewest_after;
  for (const auto& o : outcomes) {
    fit.push_back(o.tta_fit_s);
    iteration.push_back(o.tta_fit_iteration ? std::optional<double>(*o.tta_fit_iteration) : std::nullopt);
    if (o.tta_fit_s) fewest_after = std::min(fewest_after.value_or(o.evaluations_after_fit), o.evaluations_after_fit);
  }
  v["tta_fit_s"] = optional_number(median_reached(fit));
  v["tta_fit_iteration"] = optional_number(median_reached(iteration));
  if (fewest_after) v["evaluations_after_fit"] = *fewest_after;
  return fit;
}

// A paired speedup as summary.json writes it, at the target or a report target.
void write_paired(nlohmann::ordered_json& out, const PairedSpeedup& paired) {
  out["speedup_vs_ddp"] = optional_number(paired.median);
  out["speedup_ci95"] = interval_json(paired.ci95);
  out["speedup_pairs"] = paired.pairs;
}

nlohmann::ordered_json outcome_json(const RunOutcome& o) {
  nlohmann::ordered_json j = {{"seed", o.seed}, {"run", o.dir}};
  if (!o.error.empty()) {
    j["error"] = o.error;
    return j;
  }
  j["tta_s"] = optional_number(o.tta_s);
  j["tta_iteration"] = o.tta_iteration ? nlohmann::ordered_json(*o.tta_iteration) : nullptr;
  j["tta_fit_s"] = optional_number(o.tta_fit_s);
  j["tta_fit_iteration"] = o.tta_fit_iteration ? nlohmann::ordered_json(*o.tta_fit_iteration) : nullptr;
  if (o.tta_fit_s) j["evaluations_after_fit"] = o.evaluations_after_fit;
  if (!o.tta_at.empty()) {
    nlohmann::ordered_json at = nlohmann::ordered_json::object();
    for (const auto& [target, tta] : o.tta_at) at[target_key(target)] = optional_number(tta);
    j["tta_at"] = at;
  }
  j["trace_offset_s"] = o.trace_offset_s;
  j["best_accuracy"] = o.best_accuracy;
  j["final_accuracy"] = o.final_accuracy;
  j["iterations"] = o.iterations;
  j["wan_bytes"] = optional_number(o.wan_bytes);
  j["mean_iteration_s"] = o.mean_iteration_s;
  j["duration_s"] = o.duration_s;
  if (o.system_stats.is_object() && !o.system_stats.empty()) j["system_stats"] = o.system_stats;
  return j;
}

// The system's own options (its table, core/train/system_options.h) and,
// since systems may each have their own, the optimizer settings.
nlohmann::ordered_json options_of(const train::TrainConfig& c) {
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  const nlohmann::json own = c.options->to_json();
  for (const auto& [key, value] : own.items()) options[key] = value;
  options["optimizer"] = {{"lr", c.lr}, {"momentum", c.momentum}, {"weight_decay", c.weight_decay},
                          {"warmup", c.warmup_iterations}};
  return options;
}

std::optional<double> ratio(const std::optional<double>& numerator, const std::optional<double>& denominator) {
  if (!numerator || !denominator || *denominator <= 0) return std::nullopt;
  return *numerator / *denominator;
}

RunOutcome read_timing_outcome(const nlohmann::json& summary, RunOutcome o) {
  o.timing = true;
  o.iterations = summary.value("iterations_completed", 0);
  const double global_batch = summary.value("global_batch", 0.0);
  o.samples_per_s = o.duration_s > 0 ? global_batch * o.iterations / o.duration_s : 0;
  return o;
}

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read the file", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path, e.what()));
  }
}

RunOutcome read_outcome(const std::string& dir, const std::string& relative_dir, uint64_t seed, double target,
                        const std::vector<double>& report_targets) {
  RunOutcome o;
  o.seed = seed;
  o.dir = relative_dir;
  const auto manifest = read_json_file(dir + "/manifest.json");
  const auto summary = manifest.value("summary", nlohmann::json::object());
  o.trace_offset_s = manifest.value("trace_offset_s", 0.0);
  if (summary.contains("wan_bytes")) o.wan_bytes = summary["wan_bytes"].get<double>();
  o.duration_s = summary.value("duration_s", summary.value("wall_s", 0.0));
  o.mean_iteration_s = summary.value("mean_iteration_ms", 0.0) / 1000;
  if (summary.contains("system_stats")) o.system_stats = summary["system_stats"];
  if (summary.value("math", std::string("full")) == "timing") return read_timing_outcome(summary, std::move(o));
  const auto rows = read_eval_csv(dir + "/eval.csv");
  if (rows.empty()) throw std::runtime_error(fmt::format("{}/eval.csv: no evaluations", dir));
  for (const double t : report_targets) o.tta_at[t] = std::nullopt;
  for (const auto& row : rows) {
    o.best_accuracy = std::max(o.best_accuracy, row.accuracy);
    if (!o.tta_s && row.accuracy >= target) o.tta_s = row.time_s, o.tta_iteration = row.iteration;
    for (auto& [t, tta] : o.tta_at)
      if (!tta && row.accuracy >= t) tta = row.time_s;
  }
  std::vector<double> accuracies;
  for (const auto& row : rows) accuracies.push_back(row.accuracy);
  if (const auto i = fit_reaching(accuracies, target)) {
    o.tta_fit_s = rows[*i].time_s;
    o.tta_fit_iteration = rows[*i].iteration;
    o.evaluations_after_fit = static_cast<int>(rows.size() - 1 - *i);
  }
  o.final_accuracy = rows.back().accuracy;
  o.iterations = rows.back().iteration;
  if (o.tta_s) o.egress_to_target_bytes = egress_before(dir + "/link.csv", *o.tta_s);
  return o;
}

SummaryBuilder::SummaryBuilder(const Scenario& scenario, const train::Backend& backend,
                               const std::vector<uint64_t>& seeds)
    : target_(scenario.target_accuracy), report_targets_(scenario.report_targets), cost_per_hour_(scenario.cost_per_hour()) {
  for (const auto& c : scenario.clusters)
    if (c.egress_per_gb > 0) egress_per_gb_[c.name] = c.egress_per_gb;
  has_wan_ = scenario.clusters.size() > 1;  // one cluster sends nothing over a WAN
  const auto& c = scenario.systems.front().config;
  top_ = {{"scenario", scenario.name},
          {"backend", backend.name()},
          {"clock", backend.simulated() ? "simulated seconds" : "wall seconds"},
          {"target_accuracy", scenario.target_accuracy},
          {"report_targets", scenario.report_targets},
          {"seeds", seeds},
          {"model", c.model},
          {"dataset", c.dataset},
          {"nodes", c.nodes},
          {"gpus_per_node", c.gpus_per_node},
          {"batch_per_worker", c.batch_per_worker},
          {"wan_shaping", backend.has_network()}};
  if (c.unequal_gpus()) top_["node_gpus"] = c.node_gpus;
  if (!c.model_file.empty()) top_["model_file"] = c.model_file;
  if (c.dataset == "npz") top_["dataset_file"] = c.data_file;
  // Where the data lives, the file's or run --label-skew's (then the
  // folder's scenario.yaml says otherwise); named only when skewed, so
  // other summaries stay as they were.
  if (c.label_skew > 0) top_["label_skew"] = c.label_skew;
  if (!backend.summary_note().empty()) top_["note"] = backend.summary_note();
  // The MTU asked for (the file's links.mtu or run --mtu); each run's
  // manifest has the one used.
  if (backend.has_network() && has_wan_)
    top_["mtu"] = scenario.network.mtu == 0 ? nlohmann::ordered_json("auto") : nlohmann::ordered_json(scenario.network.mtu);
  // Named only when it is not ns-3's packets, so packet-level summaries stay
  // as they were.
  if (backend.has_network() && has_wan_ && scenario.network.model != net::NetworkModel::packet)
    top_["network_model"] = net::network_model_name(scenario.network.model);
  if (cost_per_hour_ > 0) top_["cost_per_hour"] = cost_per_hour_;
  if (!egress_per_gb_.empty()) top_["egress_per_gb"] = egress_per_gb_;
  choose_reference(scenario.systems);
}

// The reference system's first run, or the one labelled as the system.
void SummaryBuilder::choose_reference(const std::vector<ScenarioSystem>& systems) {
  const std::string reference = train::speedup_reference().name;
  reference_.clear();
  for (const auto& s : systems)
    if (s.config.system == reference && (reference_.empty() || s.label == reference)) reference_ = s.label;
  top_["speedup_reference"] = reference_.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(reference_);
}

bool SummaryBuilder::has_system(const std::string& label) const {
  return std::any_of(systems_.begin(), systems_.end(), [&](const SystemEntry& s) { return s.label == label; });
}

void SummaryBuilder::add_system(const ScenarioSystem& system, const std::vector<RunOutcome>& outcomes) {
  SystemEntry entry;
  entry.label = system.label;
  entry.value = {{"system", system.config.system}, {"options", options_of(system.config)}};
  auto& v = entry.value;
  std::string error;
  for (const auto& o : outcomes)
    if (error.empty() && !o.error.empty()) error = fmt::format("seed {}: {}", o.seed, o.error);
  const bool timing = !outcomes.empty() && outcomes.front().timing;
  auto mean = [&](auto get) { return number(*mean_of(outcomes, [&](const RunOutcome& o) { return std::optional<double>(get(o)); })); };
  if (!error.empty()) {
    v["error"] = error;
  } else if (timing) {
    v["math"] = "timing";
    v["iterations"] = mean([](const RunOutcome& o) { return o.iterations; });
    v["wan_bytes"] = optional_number(mean_of(outcomes, [](const RunOutcome& o) { return o.wan_bytes; }));
    v["mean_iteration_s"] = mean([](const RunOutcome& o) { return o.mean_iteration_s; });
    v["samples_per_s"] = mean([](const RunOutcome& o) { return o.samples_per_s; });
    v["duration_s"] = mean([](const RunOutcome& o) { return o.duration_s; });
    entry.mean_iteration_s = *mean_of(outcomes, [](const RunOutcome& o) { return std::optional<double>(o.mean_iteration_s); });
  } else {
    std::vector<std::optional<double>> tta, iteration, bound;
    for (const auto& o : outcomes) {
      tta.push_back(o.tta_s);
      iteration.push_back(o.tta_iteration ? std::optional<double>(*o.tta_iteration) : std::nullopt);
      bound.push_back(o.tta_s.value_or(o.duration_s));
      for (const auto& [target, at] : o.tta_at) entry.tta_per_seed[target].push_back(at);
    }
    entry.tta_per_seed[target_] = tta;
    entry.tta_s = median_reached(tta);
    entry.tta_lower_bound_s = median_reached(bound);
    v["tta_s"] = optional_number(entry.tta_s);
    v["tta_iteration"] = optional_number(median_reached(iteration));
    v["seeds_reaching_target"] = std::count_if(tta.begin(), tta.end(), [](const auto& t) { return t.has_value(); });
    entry.tta_fit_per_seed = write_fit_reading(v, outcomes);
    nlohmann::ordered_json targets = nlohmann::ordered_json::object();
    for (const double t : report_targets_) {
      const auto& per_seed = entry.tta_per_seed[t];
      targets[target_key(t)] = {{"tta_s", optional_number(median_reached(per_seed))},
                                {"seeds_reaching", std::count_if(per_seed.begin(), per_seed.end(),
                                                                 [](const auto& x) { return x.has_value(); })}};
    }
    if (!report_targets_.empty()) v["targets"] = targets;
    v["best_accuracy"] = mean([](const RunOutcome& o) { return o.best_accuracy; });
    v["final_accuracy"] = mean([](const RunOutcome& o) { return o.final_accuracy; });
    v["iterations"] = mean([](const RunOutcome& o) { return o.iterations; });
    v["wan_bytes"] = optional_number(mean_of(outcomes, [](const RunOutcome& o) { return o.wan_bytes; }));
    v["mean_iteration_s"] = mean([](const RunOutcome& o) { return o.mean_iteration_s; });
    v["duration_s"] = mean([](const RunOutcome& o) { return o.duration_s; });
    if (cost_per_hour_ > 0 || !egress_per_gb_.empty()) add_cost(v, entry.tta_s, outcomes);
  }
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const auto& o : outcomes) runs.push_back(o.dir);
  v["runs"] = runs;
  if (outcomes.size() > 1) {
    nlohmann::ordered_json per_seed = nlohmann::ordered_json::array();
    for (const auto& o : outcomes) per_seed.push_back(outcome_json(o));
    v["per_seed"] = per_seed;
  }
  systems_.push_back(std::move(entry));
}

void SummaryBuilder::order_as(const std::vector<std::string>& labels) {
  auto position = [&](const SystemEntry& s) {
    return std::find(labels.begin(), labels.end(), s.label) - labels.begin();
  };
  std::stable_sort(systems_.begin(), systems_.end(),
                   [&](const SystemEntry& a, const SystemEntry& b) { return position(a) < position(b); });
}

// Cost to reach the target: the clusters' hourly price (nodes and GPUs) over
// the TTA, plus each cluster's WAN egress until then at its price per GB
// (mean over seeds). Egress needs link.csv (sim, emu); without it the
// egress part is unknown and the cost is null rather than understated.
void SummaryBuilder::add_cost(nlohmann::ordered_json& v, const std::optional<double>& tta_s,
                              const std::vector<RunOutcome>& outcomes) const {
  if (!tta_s) {
    v["cost_to_target"] = nullptr;
    return;
  }
  const double compute = cost_per_hour_ * *tta_s / 3600;
  double egress = 0;
  for (const auto& o : outcomes) {
    if (!egress_per_gb_.empty() && has_wan_ && o.egress_to_target_bytes.empty()) {
      v["cost_to_target"] = nullptr;
      v["cost_note"] = "no link.csv: WAN egress unknown";
      return;
    }
    for (const auto& [cluster, bytes] : o.egress_to_target_bytes) {
      const auto price = egress_per_gb_.find(cluster);
      if (price != egress_per_gb_.end()) egress += price->second * bytes / 1e9 / static_cast<double>(outcomes.size());
    }
  }
  v["cost_to_target"] = compute + egress;
  v["cost_breakdown"] = {{"compute", compute}, {"egress", egress}};
}

// The median of the per-seed (paired) speedups over the reference and its
// 95% interval, at the target and at each report target.
nlohmann::ordered_json SummaryBuilder::speedups(const SystemEntry& s, const SystemEntry& reference) const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const auto at_target = paired_speedup(reference.tta_per_seed.at(target_), s.tta_per_seed.at(target_));
  write_paired(out, at_target);
  // The same pairs read from the monotone fit.
  const auto fit = paired_speedup(reference.tta_fit_per_seed, s.tta_fit_per_seed);
  out["speedup_vs_ddp_fit"] = optional_number(fit.median);
  out["speedup_fit_ci95"] = interval_json(fit.ci95);
  out["speedup_fit_pairs"] = fit.pairs;
  // ddp never reached the target: its run length bounds its TTA from below.
  if (!reference.tta_s && reference.tta_lower_bound_s && s.tta_s)
    out["speedup_vs_ddp_at_least"] = *ratio(reference.tta_lower_bound_s, s.tta_s);
  if (!report_targets_.empty()) {
    auto targets = s.value.at("targets");
    for (const double t : report_targets_) {
      // The target is one of the report targets: its bootstrap (10,000
      // resamples) is done once.
      write_paired(targets[target_key(t)],
                   t == target_ ? at_target : paired_speedup(reference.tta_per_seed.at(t), s.tta_per_seed.at(t)));
    }
    out["targets"] = targets;
  }
  return out;
}

nlohmann::ordered_json SummaryBuilder::json() const {
  nlohmann::ordered_json summary = top_;
  const SystemEntry* reference = nullptr;
  for (const auto& s : systems_)
    if (s.label == reference_) reference = &s;
  nlohmann::ordered_json systems = nlohmann::ordered_json::object();
  for (const auto& s : systems_) {
    auto value = s.value;
    if (!value.contains("error") && value.contains("math")) {
      // Timing runs: no TTA; the iteration-time ratio is all there is.
      if (reference && reference->mean_iteration_s > 0 && s.mean_iteration_s > 0)
        value["iteration_speedup_vs_ddp"] = reference->mean_iteration_s / s.mean_iteration_s;
    } else if (!value.contains("error")) {
      // No ddp in the run, or ddp failed: the speedup is null, not absent.
      if (reference && !reference->value.contains("error")) {
        value.update(speedups(s, *reference));
      } else {
        value["speedup_vs_ddp"] = nullptr;
        value["speedup_vs_ddp_fit"] = nullptr;
      }
    }
    systems[s.label] = value;
  }
  summary["systems"] = systems;
  return summary;
}

}  // namespace st::apps
