#include "core/data/sampler.h"

#include <numeric>
#include <utility>
#include <stdexcept>
#include <string>

#include "core/data/random.h"

namespace st::data {

std::vector<std::size_t> seeded_permutation(std::size_t size, uint64_t seed, uint64_t epoch) {
  std::vector<std::size_t> order(size);
  std::iota(order.begin(), order.end(), std::size_t{0});
  SplitMix64 rng(mix64(seed, epoch));
  portable_shuffle(order, rng);
  return order;
}

ShardSampler::ShardSampler(std::size_t dataset_size, int world_size, int rank, uint64_t seed)
    : dataset_size_(dataset_size), world_size_(world_size), rank_(rank), seed_(seed) {
  if (world_size < 1) {
    throw std::invalid_argument("ShardSampler: world_size " + std::to_string(world_size) +
                                " must be at least 1");
  }
  if (rank < 0 || rank >= world_size) {
    throw std::invalid_argument("ShardSampler: rank " + std::to_string(rank) + " outside 0.." +
                                std::to_string(world_size - 1));
  }
  if (dataset_size < static_cast<std::size_t>(world_size)) {
    throw std::invalid_argument("ShardSampler: " + std::to_string(dataset_size) +
                                " samples cannot be shared by " + std::to_string(world_size) +
                                " ranks");
  }
  const auto world = static_cast<std::size_t>(world_size);
  begin_ = dataset_size * static_cast<std::size_t>(rank) / world;
  end_ = dataset_size * static_cast<std::size_t>(rank + 1) / world;
}

ShardSampler::ShardSampler(std::shared_ptr<const std::vector<std::size_t>> pool, int world_size, int rank,
                           uint64_t seed)
    : ShardSampler(pool ? pool->size() : 0, world_size, rank, seed) {
  pool_ = std::move(pool);
}

std::vector<std::size_t> ShardSampler::epoch_indices(uint64_t epoch) const {
  // Every rank shuffles the full index set; O(N) per epoch is negligible
  // next to an epoch of training.
  std::vector<std::size_t> order = seeded_permutation(dataset_size_, seed_, epoch);
  std::vector<std::size_t> shard(order.begin() + static_cast<std::ptrdiff_t>(begin_),
                                 order.begin() + static_cast<std::ptrdiff_t>(end_));
  if (pool_)
    for (auto& index : shard) index = (*pool_)[index];
  return shard;
}

BatchStream::BatchStream(ShardSampler sampler, uint64_t first_epoch)
    : sampler_(std::move(sampler)), epoch_(first_epoch), current_(sampler_.epoch_indices(first_epoch)) {}

std::vector<std::size_t> BatchStream::next(std::size_t batch_size) {
  if (batch_size == 0 || batch_size > sampler_.shard_size()) {
    throw std::invalid_argument("BatchStream: batch size " + std::to_string(batch_size) +
                                " must be in 1.." + std::to_string(sampler_.shard_size()) +
                                " (the shard size)");
  }
  if (current_.size() - position_ < batch_size) {
    ++epoch_;
    current_ = sampler_.epoch_indices(epoch_);
    position_ = 0;
  }
  const auto first = current_.begin() + static_cast<std::ptrdiff_t>(position_);
  position_ += batch_size;
  return std::vector<std::size_t>(first, first + static_cast<std::ptrdiff_t>(batch_size));
}

}  // namespace st::data
