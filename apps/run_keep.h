#pragma once
// `stellatrain run --systems A,B --out DIR` where DIR holds an earlier run
// of the same scenario: the systems not rerun keep their runs, and
// summary.json lists them beside the rerun ones (speedups over the ddp of
// either), in the scenario's order. A system is kept only when every
// seed's run is there and its manifest.json shows the configuration the
// scenario file now gives (system, options, optimizer, iterations, seed,
// trace offset, network model). Nothing is kept when the scenario file
// differs from the copy the earlier run left (scenario.yaml) in what shapes
// a run and no manifest records (links, traces, model, data, batch, compute,
// evaluation). A system left out is named in the log with why, so a summary
// never mixes runs of different configurations. `run --summarize` keeps
// every system this way and runs none: a folder whose runs came from
// several machines gets one summary.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "apps/run_summary.h"
#include "apps/scenario.h"

namespace st::apps {

struct KeptSystem {
  ScenarioSystem system;
  std::vector<RunOutcome> outcomes;  // in seed order
};

// The scenario name an earlier summary.json in `out` names ("" when there
// is none or it cannot be read). Read before the folder is prepared, which
// removes that file.
std::string earlier_scenario_name(const std::filesystem::path& out);

// The first key path (e.g. "links.wan.default.mbps") at which the scenario
// file `current` differs from `earlier`, the copy an earlier run left in
// its folder, or a sentence saying why `earlier` cannot be compared; ""
// when they agree. Keys that shape no run (name, description, targets,
// eval.interval_after_targets) or that each run's manifest checks (systems,
// seeds) are left out. Values
// compare as written: 100 and 100.0 differ, which only keeps less.
std::string scenario_difference(const std::filesystem::path& earlier, const std::filesystem::path& current);

// The systems of `candidates` whose runs in `out` match `config_for` for
// every seed. `network_model`: the network model name runs must show in
// their manifests ("" when the backend applies none).
std::vector<KeptSystem> kept_systems(const std::vector<ScenarioSystem>& candidates, const std::vector<uint64_t>& seeds,
                                     const std::filesystem::path& out, const Scenario& scenario,
                                     const std::string& network_model,
                                     const std::function<train::TrainConfig(const ScenarioSystem&, uint64_t)>& config_for);

// The kept systems join `summary` beside the ones that ran (all of them,
// those before an interruption, or none with --summarize), all in the
// order of `file_systems`, and the speedup reference is chosen among all
// that the summary holds.
void add_kept(SummaryBuilder& summary, const std::vector<KeptSystem>& kept,
              const std::vector<ScenarioSystem>& file_systems);

// `stellatrain run --summarize`: summary.json written into `out` from the
// runs it already holds, every system of `scenario` kept as above (in the
// order of `file_systems`), no run started. Refused, with the reason, when
// `out` is no folder, its scenario.yaml differs from the scenario file, or
// no system is kept.
nlohmann::ordered_json summarize_kept(
    const Scenario& scenario, const train::Backend& backend, const std::vector<uint64_t>& seeds,
    const std::filesystem::path& out, const std::string& network_model,
    const std::vector<ScenarioSystem>& file_systems,
    const std::function<train::TrainConfig(const ScenarioSystem&, uint64_t)>& config_for);

}  // namespace st::apps
