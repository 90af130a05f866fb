#include "core/data/placement.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/data/dataset.h"
#include "core/data/sampler.h"

namespace st::data {
namespace {

// Fixed, so that the placement is a property of the scenario, not of a seed.
constexpr uint64_t kPlacementSeed = 0x5EED'DA7A'0F51'7E5Bull;

void check(const std::vector<int>& node_workers, int node, double skew) {
  if (!(skew >= 0 && skew <= 1))
    throw std::invalid_argument("label_skew " + std::to_string(skew) + " must be in [0, 1]");
  if (node_workers.empty()) throw std::invalid_argument("label_skew: no nodes to place the samples on");
  if (node < 0 || node >= static_cast<int>(node_workers.size()))
    throw std::invalid_argument("label_skew: node " + std::to_string(node) + " outside 0.." +
                                std::to_string(node_workers.size() - 1));
  for (int w : node_workers)
    if (w < 1) throw std::invalid_argument("label_skew: every node needs at least one worker");
}

// Node n's fraction of a class whose home is `home`.
double share_of(const std::vector<int>& node_workers, int workers, int n, int home, double skew) {
  const double even = static_cast<double>(node_workers[static_cast<std::size_t>(n)]) / workers;
  return (1 - skew) * even + (n == home ? skew : 0.0);
}

}  // namespace

std::vector<std::size_t> label_skewed_samples(const std::vector<long long>& labels, long long classes,
                                              const std::vector<int>& node_workers, int node, double skew) {
  check(node_workers, node, skew);
  if (classes < 1) throw std::invalid_argument("label_skew: the dataset has no classes");
  const int nodes = static_cast<int>(node_workers.size());
  const int workers = std::accumulate(node_workers.begin(), node_workers.end(), 0);
  std::vector<std::vector<std::size_t>> members(static_cast<std::size_t>(classes));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || labels[i] >= classes)
      throw std::invalid_argument("label_skew: sample " + std::to_string(i) + " has label " +
                                  std::to_string(labels[i]) + " outside 0.." + std::to_string(classes - 1));
    members[static_cast<std::size_t>(labels[i])].push_back(i);
  }
  std::vector<std::size_t> mine;
  for (long long c = 0; c < classes; ++c) {
    const auto& of_class = members[static_cast<std::size_t>(c)];
    const int home = static_cast<int>(c % nodes);
    // Each node takes a consecutive run of a seeded order of the class; the
    // runs' ends are rounded cumulative shares, so every sample has exactly
    // one node and the counts are within one of the shares.
    const auto order = seeded_permutation(of_class.size(), kPlacementSeed, static_cast<uint64_t>(c));
    double before = 0;
    for (int n = 0; n < node; ++n) before += share_of(node_workers, workers, n, home, skew);
    const double upto = before + share_of(node_workers, workers, node, home, skew);
    const auto size = static_cast<double>(of_class.size());
    const auto begin = static_cast<std::size_t>(std::llround(before * size));
    const auto end = node + 1 == nodes ? of_class.size() : static_cast<std::size_t>(std::llround(upto * size));
    for (std::size_t k = begin; k < end; ++k) mine.push_back(of_class[order[k]]);
  }
  const auto needed = static_cast<std::size_t>(node_workers[static_cast<std::size_t>(node)]);
  if (mine.size() < needed)
    throw std::invalid_argument("label_skew " + std::to_string(skew) + " leaves node " + std::to_string(node) + " " +
                                std::to_string(mine.size()) + " samples for its " + std::to_string(needed) +
                                " workers (" + std::to_string(classes) + " classes over " + std::to_string(nodes) +
                                " nodes)");
  std::sort(mine.begin(), mine.end());
  return mine;
}

std::vector<std::size_t> label_skewed_samples(const Dataset& train, const std::vector<int>& node_workers, int node,
                                              double skew) {
  std::vector<long long> labels(train.size());
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = train.label(i);
  return label_skewed_samples(labels, train.classes(), node_workers, node, skew);
}

}  // namespace st::data
