#include "apps/seed_statistics.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/data/random.h"

namespace st::apps {

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<double> median_reached(const std::vector<std::optional<double>>& values) {
  std::vector<double> reached;
  for (const auto& v : values)
    if (v) reached.push_back(*v);
  // The missing sort after every value: the median is a reached value only
  // while they are fewer than half.
  if (values.empty() || 2 * reached.size() <= values.size()) return std::nullopt;
  std::sort(reached.begin(), reached.end());
  const std::size_t n = values.size();
  const auto at = [&](std::size_t i) { return reached[i]; };
  if (n % 2 == 1) return at(n / 2);
  // Even count: both middle values must have been reached.
  if (n / 2 >= reached.size()) return std::nullopt;
  return (at(n / 2 - 1) + at(n / 2)) / 2;
}

PairedSpeedup paired_speedup(const std::vector<std::optional<double>>& reference,
                             const std::vector<std::optional<double>>& system) {
  if (reference.size() != system.size()) throw std::invalid_argument("paired_speedup: one value per seed on each side");
  std::vector<double> ratios;
  for (std::size_t i = 0; i < reference.size(); ++i)
    if (reference[i] && system[i] && *system[i] > 0) ratios.push_back(*reference[i] / *system[i]);
  PairedSpeedup out;
  out.pairs = static_cast<int>(ratios.size());
  out.median = median(ratios);
  if (ratios.size() < 2) return out;
  constexpr int kResamples = 10000;
  data::SplitMix64 draw(0x626f6f74ull);  // "boot": a fixed stream
  std::vector<double> medians;
  medians.reserve(kResamples);
  std::vector<double> sample(ratios.size());
  for (int r = 0; r < kResamples; ++r) {
    for (auto& x : sample) x = ratios[draw.below(ratios.size())];
    medians.push_back(*median(sample));
  }
  std::sort(medians.begin(), medians.end());
  const auto percentile = [&](double p) {
    const auto i = static_cast<std::size_t>(std::lround(p * (kResamples - 1)));
    return medians[std::min(i, medians.size() - 1)];
  };
  out.ci95 = std::make_pair(percentile(0.025), percentile(0.975));
  return out;
}

}  // namespace st::apps
