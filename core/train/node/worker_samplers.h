#pragma once
// Which training samples each local worker of a node reads: by default a
// fresh shard of the whole training set every epoch (data::ShardSampler over
// every worker of every node); with TrainConfig::label_skew > 0, a shard of
// the fixed subset the node holds (core/data/placement.h), shared by the
// node's own workers only.
#include <vector>

#include "core/data/sampler.h"

namespace st::data {
class Dataset;
}

namespace st::train {

struct TrainConfig;

// One sampler per worker of `node`, in worker order.
std::vector<data::ShardSampler> worker_samplers(const TrainConfig& config, const data::Dataset& train, int node);

}  // namespace st::train
