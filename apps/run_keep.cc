#include "apps/run_keep.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <optional>

#include "apps/run_parts.h"
#include "core/train/config.h"

namespace st::apps {
namespace {

namespace fs = std::filesystem;

std::optional<nlohmann::json> read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

// Why the run in `dir` is not the one `config` would make ("" when it is).
std::string mismatch(const fs::path& dir, const train::TrainConfig& config, const std::string& network_model,
                     int mtu) {
  const auto manifest = read_json(dir / "manifest.json");
  if (!manifest || !manifest->is_object()) return fmt::format("{}: missing or unreadable", (dir / "manifest.json").string());
  if (!fs::exists(dir / "eval.csv")) return fmt::format("{}: missing", (dir / "eval.csv").string());
  const auto& m = *manifest;
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
  const auto summary = read_json(out / "summary.json");
  if (!summary || !summary->is_object()) return "";
  return summary->value("scenario", "");
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
      const auto config = config_for(system, seed);
      why = mismatch(out / relative, config, network_model, scenario.network.mtu);
      if (!why.empty()) break;
      try {
        auto outcome = read_outcome((out / relative).string(), relative, seed, scenario.target_accuracy,
                                    scenario.report_targets);
        const auto manifest = read_json(out / relative / "manifest.json");
        outcome.mean_iteration_s =
            manifest->value("summary", nlohmann::json::object()).value("mean_iteration_ms", 0.0) / 1000;
        k.outcomes.push_back(std::move(outcome));
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
