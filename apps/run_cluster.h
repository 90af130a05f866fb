#pragma once
// `run --slurm`: a scenario's runs as a Slurm job array
// (apps/slurm_launcher.h), merged into summary.json once they have all
// finished, as `--jobs` writes it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace st::train {
class Backend;
}

namespace st::apps {

struct RunOptions;
struct Scenario;

// The summary it wrote, or, while runs are still queued or running (after
// --slurm-no-wait or Ctrl-C while waiting), {"slurm": {...}} (slurm_pending).
nlohmann::ordered_json run_on_cluster(const Scenario& scenario, const RunOptions& options, train::Backend& backend,
                                      const std::vector<uint64_t>& seeds, const std::filesystem::path& out);

}  // namespace st::apps
