#include "apps/sweep_grid.h"

#include <fmt/format.h>

#include <algorithm>

namespace st::apps {
namespace {

// Systems with a density a sweep can fix (SystemOptions::fix_density).
bool has_density(const train::TrainConfig& c) { return c.options->clone()->fix_density(1.0); }

}  // namespace

std::string setting_label(const std::string& system, const Setting& s, const SweepGrid& g) {
  std::string label = system;
  if (!g.lrs.empty()) label += fmt::format(".lr-{}", s.lr);
  if (!g.momenta.empty()) label += fmt::format(".m-{}", s.momentum);
  if (!g.warmups.empty()) label += fmt::format(".w-{}", s.warmup);
  if (!g.densities.empty()) label += s.density > 0 ? fmt::format(".d-{}", s.density) : std::string(".as-is");
  return label;
}

std::vector<Setting> grid(const SweepGrid& g, const train::TrainConfig& base) {
  const auto lrs = g.lrs.empty() ? std::vector<double>{base.lr} : g.lrs;
  const auto momenta = g.momenta.empty() ? std::vector<double>{base.momentum} : g.momenta;
  const auto warmups = g.warmups.empty() ? std::vector<int>{base.warmup_iterations} : g.warmups;
  std::vector<double> densities{0};
  if (has_density(base)) densities.insert(densities.end(), g.densities.begin(), g.densities.end());
  std::vector<Setting> out;
  for (double lr : lrs)
    for (double m : momenta)
      for (int w : warmups)
        for (double d : densities) out.push_back({lr, m, w, d});
  return out;
}

bool better(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b, const char* tta_key) {
  if (a.contains("error")) return false;
  if (b.contains("error")) return true;
  // value() and at(): a const json's operator[] on a missing key is undefined.
  const auto a_tta = a.value(tta_key, nlohmann::ordered_json()), b_tta = b.value(tta_key, nlohmann::ordered_json());
  if (a_tta.is_null() != b_tta.is_null()) return !a_tta.is_null();
  if (!a_tta.is_null()) return a_tta.get<double>() < b_tta.get<double>();
  return a.at("best_accuracy").get<double>() > b.at("best_accuracy").get<double>();
}

std::vector<Setting> beyond_the_edge(const std::vector<Point>& points, const Point& best) {
  std::vector<Setting> out;
  auto extend = [&](double Setting::*dimension, double lowest, double highest) {
    std::vector<double> values;
    for (const auto& p : points)
      if (p.setting.*dimension > 0) values.push_back(p.setting.*dimension);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    const double value = best.setting.*dimension;
    if (values.size() < 2 || value <= 0) return;  // one value tried: not swept
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    Setting next = best.setting;
    if (value == *high && value * 2 <= highest) {
      next.*dimension = value * 2;
    } else if (value == *low && value / 2 >= lowest) {
      next.*dimension = value / 2;
    } else {
      return;
    }
    out.push_back(next);
  };
  extend(&Setting::lr, 1e-6, 10);
  extend(&Setting::density, 1e-6, 1);
  return out;
}

}  // namespace st::apps
