#include "apps/run_keep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <stdexcept>

#include "apps/run_parts.h"
#include "core/train/config.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

// Why the run whose manifest.json is `m` (in `dir`) is not the one `config`
// would make ("" when it is).
std::string mismatch(const fs::path& dir, const nlohmann::json& m, const train::TrainConfig& config,
                     const std::string& network_model, int mtu) {
  if (!m.is_object()) return fmt::format("{}: not a JSON object", (dir / "manifest.json").string());
  if (!fs::exists(dir / "eval.csv")) return fmt::format("{}: missing", (dir / "eval.csv").string());
  auto differs = [&](const char* field) {
    return fmt::format("{}: \"{}\" does not match the scenario", (dir / "manifest.json").string(), field);
  };
  if (m.value("system", "") != config.system) return differs("system");
  if (m.value("options", nlohmann::json()) != config.options->to_json()) return differs("options");
  const auto optimizer = m.value("optimizer", nlohmann::json::object());
  if (optimizer.value("lr", -1.0) != config.lr || optimizer.value("momentum", -1.0) != config.momentum ||
      optimizer.value("weight_decay", -1.0) != config.weight_decay ||
      optimizer.value("warmup_iterations", -1) != config.warmup_iterations)
    return differs("optimizer");
  if (m.value("iterations", -1) != config.iterations) return differs("iterations");
  if (m.value("time_budget_s", 0.0) != config.time_budget_s) return differs("time_budget_s");
  if (m.value("seed", uint64_t{0}) != config.seed) return differs("seed");
  if (m.value("trace_offset_s", -1.0) != config.trace_offset_s) return differs("trace_offset_s");
  if (m.value("label_skew", 0.0) != config.label_skew) return differs("label_skew");
  if (m.value("eval", nlohmann::json::object()).value("on", "test") != config.evaluate_on) return differs("eval.on");
  if (!network_model.empty()) {
    // Packet-level manifests do not name their model (sim/sim_backend.cc).
    const auto network = m.value("network", nlohmann::json::object());
    if (network.value("model", "packet") != network_model) return differs("network.model");
    if (mtu == 0 ? !network.value("mtu_automatic", false) : network.value("mtu", -1) != mtu) return differs("network.mtu");
  }
  return "";
}

// Keys a kept run need not share: they name or describe the scenario, set
// what the summary reads from eval.csv (the kept runs' files are read again
// against the current targets), or are checked run by run against
// manifest.json (mismatch above). eval.interval_after_targets thins the
// evaluations only once the best accuracy reached the highest report
// target, so it moves no run's TTA at any report target, only how many
// evaluations follow it (a kept run's manifest keeps its own).
const std::set<std::string> kIgnoredKeys = {"name",           "description",    "systems",
                                            "seeds",          "target_accuracy", "report_targets",
                                            "eval.interval_after_targets"};

std::string joined(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

// The first path under `path` where `a` and `b` differ ("" when nowhere).
std::string first_difference(const YAML::Node& a, const YAML::Node& b, const std::string& path) {
  const std::string here = path.empty() ? "the top level" : path;
  if (a.Type() != b.Type()) return here;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar() ? "" : here;
    case YAML::NodeType::Sequence: {
      if (a.size() != b.size()) return here;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const auto inner = first_difference(a[i], b[i], fmt::format("{}[{}]", path, i));
        if (!inner.empty()) return inner;
      }
      return "";
    }
    case YAML::NodeType::Map: {
      std::set<std::string> keys;
      for (const auto& entry : a) keys.insert(entry.first.as<std::string>());
      for (const auto& entry : b) keys.insert(entry.first.as<std::string>());
      for (const auto& key : keys) {
        if (kIgnoredKeys.count(joined(path, key))) continue;
        if (!a[key] || !b[key]) return joined(path, key);
        const auto inner = first_difference(a[key], b[key], joined(path, key));
        if (!inner.empty()) return inner;
      }
      return "";
    }
    default:  // null or undefined on both sides
      return "";
  }
}

}  // namespace

std::string scenario_difference(const fs::path& earlier, const fs::path& current) {
  YAML::Node before, now;
  try {
    before = YAML::LoadFile(earlier.string());
  } catch (const YAML::Exception& e) {
    return fmt::format("{} cannot be read: {}", earlier.string(), e.what());
  }
  try {
    now = YAML::LoadFile(current.string());
  } catch (const YAML::Exception& e) {
    return fmt::format("{} cannot be read: {}", current.string(), e.what());
  }
  return first_difference(before, now, "");
}

std::string earlier_scenario_name(const fs::path& out) {
  if (!fs::exists(out / "summary.json")) return "";
  try {
    const auto summary = read_json_file((out / "summary.json").string());
    return summary.is_object() ? summary.value("scenario", "") : "";
  } catch (const std::runtime_error&) {
    return "";  // an unreadable summary names no scenario: nothing is kept
  }
}

std::vector<KeptSystem> kept_systems(const std::vector<ScenarioSystem>& candidates, const std::vector<uint64_t>& seeds,
                                     const fs::path& out, const Scenario& scenario, const std::string& network_model,
                                     const std::function<train::TrainConfig(const ScenarioSystem&, uint64_t)>& config_for) {
  std::vector<KeptSystem> kept;
  for (const auto& system : candidates) {
    if (!fs::exists(out / system.label)) {
      spdlog::info("{}: no earlier run in {}", system.label, out.string());
      continue;
    }
    KeptSystem k{system, {}};
    std::string why;
    for (const auto seed : seeds) {
      const std::string relative = run_folder(system.label, seed, seeds);
      try {
        const auto manifest = read_json_file((out / relative / "manifest.json").string());
        why = mismatch(out / relative, manifest, config_for(system, seed), network_model, scenario.network.mtu);
        if (!why.empty()) break;
        k.outcomes.push_back(read_outcome((out / relative).string(), relative, seed, scenario.target_accuracy,
                                          scenario.report_targets));
      } catch (const std::exception& e) {
        why = e.what();
        break;
      }
    }
    if (why.empty()) {
      spdlog::info("{}: kept from the earlier run in {}", system.label, out.string());
      kept.push_back(std::move(k));
    } else {
      spdlog::warn("{}: not kept in summary.json ({})", system.label, why);
    }
  }
  return kept;
}

void add_kept(SummaryBuilder& summary, const std::vector<KeptSystem>& kept,
              const std::vector<ScenarioSystem>& file_systems) {
  for (const auto& k : kept) summary.add_system(k.system, k.outcomes);
  std::vector<std::string> order;
  std::vector<ScenarioSystem> present_in_order;
  for (const auto& system : file_systems) {
    order.push_back(system.label);
    if (summary.has_system(system.label)) present_in_order.push_back(system);
  }
  summary.order_as(order);
  summary.choose_reference(present_in_order);
}

namespace {

// --summarize replaces summary.json only with one that holds every system
// and seed the earlier one did: a narrower --systems or --seeds, or a run
// that no longer matches, would otherwise lose a record without a word.
void refuse_to_drop(const fs::path& earlier_path, const nlohmann::ordered_json& summary) {
  if (!fs::exists(earlier_path)) return;
  nlohmann::ordered_json earlier;
  try {
    earlier = read_json_file(earlier_path.string());
  } catch (const std::runtime_error& e) {
    spdlog::warn("--summarize: replacing {}, which cannot be read ({})", earlier_path.string(), e.what());
    return;
  }
  std::vector<std::string> dropped;
  if (earlier.is_object() && earlier.contains("systems") && earlier["systems"].is_object())
    for (const auto& [label, _] : earlier["systems"].items())
      if (!summary["systems"].contains(label)) dropped.push_back(label);
  const bool other_seeds = earlier.is_object() && earlier.contains("seeds") && earlier["seeds"] != summary["seeds"];
  if (dropped.empty() && !other_seeds) return;
  throw std::invalid_argument(fmt::format(
      "--summarize: {} holds {}{}{} that this summary would drop; remove that file first to replace it",
      earlier_path.string(), dropped.empty() ? "" : fmt::format("systems {}", fmt::join(dropped, ", ")),
      !dropped.empty() && other_seeds ? " and " : "",
      other_seeds ? fmt::format("seeds {} (this summary: {})", earlier["seeds"].dump(), summary["seeds"].dump()) : ""));
}

}  // namespace

nlohmann::ordered_json summarize_kept(
    const Scenario& scenario, const train::Backend& backend, const std::vector<uint64_t>& seeds, const fs::path& out,
    const std::string& network_model, const std::vector<ScenarioSystem>& file_systems,
    const std::function<train::TrainConfig(const ScenarioSystem&, uint64_t)>& config_for) {
  if (!fs::is_directory(out))
    throw std::invalid_argument(fmt::format("--summarize: {} is not a results folder", out.string()));
  const std::string difference = scenario_difference(out / "scenario.yaml", scenario.source);
  if (!difference.empty())
    throw std::invalid_argument(fmt::format("--summarize: {} does not match the runs' {} at {}", scenario.source,
                                            (out / "scenario.yaml").string(), difference));
  const auto kept = kept_systems(scenario.systems, seeds, out, scenario, network_model, config_for);
  if (kept.empty())
    throw std::invalid_argument(fmt::format(
        "--summarize: no system has a matching run for every seed in {} (the lines above say why{})", out.string(),
        seeds.size() == 1 ? "; one seed is read from OUT/<system>/, where a one-seed run writes it" : ""));
  SummaryBuilder summary(scenario, backend, seeds);
  add_kept(summary, kept, file_systems);
  refuse_to_drop(out / "summary.json", summary.json());
  write_summary(out, summary.json());
  return summary.json();
}

}  // namespace st::apps
