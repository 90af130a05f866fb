#pragma once
// The grid of a `stellatrain sweep` (apps/sweep_command.cc): the settings to
// try per system, their labels, which run is better, and where the grid
// extends when the best sits at its edge.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "core/train/config.h"

namespace st::apps {

// The values listed per dimension (empty: the scenario's own value).
struct SweepGrid {
  std::vector<double> lrs, momenta, densities;
  std::vector<int> warmups;
};

struct Setting {
  double lr = 0, momentum = 0;
  int warmup = 0;
  double density = 0;  // 0: as the scenario has it (for stellatrain, the controller's choice)
};

struct Point {
  Setting setting;
  std::string label;
};

// Labels name folders: letters, digits, '-', '_' and '.'; only the swept
// dimensions appear ("ddp.lr-0.1").
std::string setting_label(const std::string& system, const Setting& s, const SweepGrid& grid);

// Every combination for a system whose scenario settings are `base`;
// densities only for systems that have one (SystemOptions::fix_density).
std::vector<Setting> grid(const SweepGrid& grid, const train::TrainConfig& base);

// Better (summary.json entries): reaches the target sooner, by `tta_key`'s
// reading (tta_s: the first evaluation; tta_fit_s: the monotone fit); among
// runs that never reach it, higher best accuracy; a failed run is never better.
bool better(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b, const char* tta_key = "tta_s");

// When `best`'s learning rate (or fixed density) is the largest or smallest
// of those tried in `points`, the setting one step beyond it (x2 or /2,
// within sensible bounds), the other values as at `best`; nothing when it
// lies inside.
std::vector<Setting> beyond_the_edge(const std::vector<Point>& points, const Point& best);

}  // namespace st::apps
