#include "core/train/node/worker_samplers.h"

#include <memory>

#include "core/data/dataset.h"
#include "core/data/placement.h"
#include "core/train/config.h"

namespace st::train {

std::vector<data::ShardSampler> worker_samplers(const TrainConfig& config, const data::Dataset& train, int node) {
  std::vector<data::ShardSampler> samplers;
  const int workers = config.gpus_of(node);
  if (config.label_skew <= 0) {
    for (int w = 0; w < workers; ++w)
      samplers.emplace_back(train.size(), config.total_workers(), config.first_worker(node) + w, config.seed);
    return samplers;
  }
  std::vector<int> node_workers;
  for (int n = 0; n < config.nodes; ++n) node_workers.push_back(config.gpus_of(n));
  const auto pool = std::make_shared<const std::vector<std::size_t>>(
      data::label_skewed_samples(train, node_workers, node, config.label_skew));
  for (int w = 0; w < workers; ++w) samplers.emplace_back(pool, workers, w, config.seed);
  return samplers;
}

}  // namespace st::train
