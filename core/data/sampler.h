#pragma once
// Data-parallel sharding of a training set across ranks (torch-free).
// Every epoch, all ranks compute the same seeded permutation of the whole
// dataset and each takes its own contiguous slice of it, so the shards of one
// epoch are disjoint and together cover every sample exactly once, and the
// assignment changes from epoch to epoch. No communication is needed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace st::data {

// A permutation of 0..size-1 determined by (seed, epoch) alone; identical on
// every platform (portable Fisher-Yates on SplitMix64).
std::vector<std::size_t> seeded_permutation(std::size_t size, uint64_t seed, uint64_t epoch);

class ShardSampler {
 public:
  // Throws std::invalid_argument unless world_size >= 1, 0 <= rank <
  // world_size and dataset_size >= world_size.
  ShardSampler(std::size_t dataset_size, int world_size, int rank, uint64_t seed);
  // The same over a fixed subset of the dataset (`pool`: the indices one
  // node holds, core/data/placement.h): the ranks sharing the pool shard a
  // fresh permutation of it every epoch and never read outside it.
  ShardSampler(std::shared_ptr<const std::vector<std::size_t>> pool, int world_size, int rank, uint64_t seed);

  // This rank's sample indices for `epoch`. Shard sizes differ by at most
  // one: rank r gets positions [r*N/W, (r+1)*N/W) of the permutation.
  std::vector<std::size_t> epoch_indices(uint64_t epoch) const;

  std::size_t shard_size() const { return end_ - begin_; }
  int world_size() const { return world_size_; }
  int rank() const { return rank_; }

 private:
  std::size_t dataset_size_;
  int world_size_;
  int rank_;
  uint64_t seed_;
  std::shared_ptr<const std::vector<std::size_t>> pool_;  // null: the whole dataset
  std::size_t begin_;
  std::size_t end_;
};

// An endless stream of mini-batches over one rank's shard, epoch after epoch.
// The batch size may change between calls (the controller re-picks per-GPU
// batch sizes); a batch never spans two epochs: when fewer than `batch_size`
// indices remain, they are skipped and the next epoch starts (drop-last).
class BatchStream {
 public:
  explicit BatchStream(ShardSampler sampler, uint64_t first_epoch = 0);

  // Throws std::invalid_argument when batch_size is 0 or exceeds the shard.
  std::vector<std::size_t> next(std::size_t batch_size);

  uint64_t epoch() const { return epoch_; }
  std::size_t position() const { return position_; }  // within this epoch's shard

 private:
  ShardSampler sampler_;
  uint64_t epoch_;
  std::vector<std::size_t> current_;
  std::size_t position_ = 0;
};

}  // namespace st::data
