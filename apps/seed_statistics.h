#pragma once
// Statistics over a scenario's seeds, as summary.json reports them
// (docs/runner.md): the median of per-seed values, and for paired runs
// (every system of a seed sees the same data order, initialisation and
// stretch of the traces) the median of the per-seed speedups with a 95%
// confidence interval from a bootstrap over seeds. Deterministic: the
// bootstrap's draws come from a fixed stream, so a summary is reproducible.
#include <optional>
#include <utility>
#include <vector>

namespace st::apps {

// The median of `values` (the mean of the middle two for an even count);
// nothing for no values.
std::optional<double> median(std::vector<double> values);

// The median of values some of which are missing (a seed that never reached
// a target counts as later than every one that did): nothing when the
// missing make up half or more.
std::optional<double> median_reached(const std::vector<std::optional<double>>& values);

struct PairedSpeedup {
  std::optional<double> median;  // of the per-seed ratios
  // 2.5th and 97.5th percentiles of the median over 10,000 resamples of
  // the pairs (with replacement); nothing with fewer than 2 pairs.
  std::optional<std::pair<double, double>> ci95;
  int pairs = 0;  // seeds where both reached the target
};

// Per seed reference / system (e.g. ddp's TTA over the system's), over the
// seeds where both have a value.
PairedSpeedup paired_speedup(const std::vector<std::optional<double>>& reference,
                             const std::vector<std::optional<double>>& system);

}  // namespace st::apps
