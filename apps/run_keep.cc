#include "apps/run_keep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

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
  if (m.value("seed", uint64_t{0}) != config.seed) return differs("seed");
  if (m.value("trace_offset_s", -1.0) != config.trace_offset_s) return differs("trace_offset_s");
  if (m.value("eval", nlohmann::json::object()).value("on", "test") != config.evaluate_on) return differs("eval.on");
  if (!network_model.empty()) {
    // Packet-level manifests do not name their model (sim/sim_backend.cc).
    const auto network = m.value("network", nlohmann::json::object());
    if (network.value("model", "packet") != network_model) return differs("network.model");
    if (mtu == 0 ? !network.value("mtu_automatic", false) : network.value("mtu", -1) != mtu) return differs("network.mtu");
  }
  return "";
}

}  // namespace

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

}  // namespace st::apps
