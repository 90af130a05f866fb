#include "core/collective/bucketed_allreduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

namespace st::collective {

BucketPlan plan_buckets(const std::vector<std::size_t>& tensor_numels, BucketOptions options) {
  return plan_sampled_buckets(tensor_numels, tensor_numels, options);
}

BucketPlan plan_sampled_buckets(const std::vector<std::size_t>& tensor_numels,
                                const std::vector<std::size_t>& wire_numels, BucketOptions options) {
  if (wire_numels.size() != tensor_numels.size())
    throw std::invalid_argument(fmt::format("bucket plan: {} full sizes for {} tensors", wire_numels.size(),
                                            tensor_numels.size()));
  BucketPlan plan;
  plan.tensor_numels = tensor_numels;
  plan.bucket_of.resize(tensor_numels.size());
  plan.offset_of.resize(tensor_numels.size());
  BucketPlan::Bucket current;
  auto close_current = [&] {
    plan.buckets.push_back(std::move(current));
    current = BucketPlan::Bucket{};
  };
  for (std::size_t i = 0; i < tensor_numels.size(); ++i) {
    plan.bucket_of[i] = plan.buckets.size();
    plan.offset_of[i] = current.numel;
    current.tensors.push_back(i);
    current.offsets.push_back(current.numel);
    if (wire_numels[i] < tensor_numels[i])
      throw std::invalid_argument(fmt::format("bucket plan: tensor {} has {} elements but stands for {}", i,
                                              tensor_numels[i], wire_numels[i]));
    current.numel += tensor_numels[i];
    current.wire_numel += wire_numels[i];
    const std::size_t cap = plan.buckets.empty() ? options.first_bucket_cap_bytes : options.bucket_cap_bytes;
    if (current.wire_numel * sizeof(float) >= cap) close_current();
  }
  if (!current.tensors.empty()) close_current();
  return plan;
}

class BucketedAllreduce::State : public std::enable_shared_from_this<State> {
 public:
  State(Communicator& comm, const BucketPlan& plan, AllreduceOptions options, DoneCallback done)
      : comm_(comm),
        plan_(plan),
        options_(options),
        done_(std::move(done)),
        first_id_(comm.reserve_collective_ids(static_cast<uint32_t>(plan.buckets.size()))),
        buffers_(plan.buckets.size()),
        missing_(plan.buckets.size()),
        tensor_data_(plan.tensor_numels.size(), nullptr),
        marked_(plan.tensor_numels.size(), false),
        buckets_left_(plan.buckets.size()) {
    for (std::size_t b = 0; b < plan.buckets.size(); ++b) missing_[b] = plan.buckets[b].tensors.size();
  }

  void finish_if_empty() {
    if (!plan_.buckets.empty()) return;
    DoneCallback done = take_done();
    comm_.unwatch(watch_id_);  // set before this runs, by the constructor's thread
    comm_.executor().post([done = std::move(done)] { done(nullptr, CollectiveStats{}); });
  }

  // A broken communicator ends the whole thing at once, even while buckets
  // are still waiting for mark_ready() and so have no run to fail.
  void watch_communicator() {
    std::weak_ptr<State> weak = shared_from_this();
    const uint64_t id = comm_.watch([weak](std::exception_ptr error) {
      if (auto self = weak.lock()) self->fail_early(error);
    });
    std::lock_guard<std::mutex> lock(mutex_);
    watch_id_ = id;
  }

  void mark_ready(std::size_t tensor, float* data) {
    const std::size_t bucket = claim(tensor, data);
    const std::size_t numel = plan_.tensor_numels[tensor];
    // Buckets are allocated on first use and never resized, so copies into
    // distinct tensors' ranges run outside the lock.
    if (numel > 0) std::memcpy(buffers_[bucket].data() + plan_.offset_of[tensor], data, numel * sizeof(float));
    bool complete = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      complete = --missing_[bucket] == 0;
      if (complete) ++started_;
    }
    if (complete) start_bucket(bucket);
  }

  std::size_t buckets_started() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
  }

 private:
  // Records the tensor's pointer; returns its bucket (allocated if needed).
  std::size_t claim(std::size_t tensor, float* data) {
    if (tensor >= plan_.tensor_numels.size())
      throw std::invalid_argument(fmt::format("bucketed allreduce: tensor {} of {}", tensor, plan_.tensor_numels.size()));
    if (data == nullptr && plan_.tensor_numels[tensor] > 0)
      throw std::invalid_argument(fmt::format("bucketed allreduce: tensor {} has no data", tensor));
    std::lock_guard<std::mutex> lock(mutex_);
    if (marked_[tensor]) throw std::invalid_argument(fmt::format("bucketed allreduce: tensor {} marked twice", tensor));
    marked_[tensor] = true;
    tensor_data_[tensor] = data;
    const std::size_t bucket = plan_.bucket_of[tensor];
    if (buffers_[bucket].empty()) buffers_[bucket].resize(plan_.buckets[bucket].numel);
    if (!first_start_) first_start_ = comm_.executor().now();
    return bucket;
  }

  // A sampled bucket's ring sends what its full tensors would.
  AllreduceOptions options_of(const BucketPlan::Bucket& bucket) const {
    AllreduceOptions options = options_;
    if (bucket.numel > 0 && bucket.wire_numel != bucket.numel)
      options.wire_scale = static_cast<double>(bucket.wire_numel) / static_cast<double>(bucket.numel);
    return options;
  }

  void start_bucket(std::size_t bucket) {
    auto self = shared_from_this();
    ring_allreduce_with_id(comm_, first_id_ + static_cast<uint32_t>(bucket), buffers_[bucket].data(),
                           plan_.buckets[bucket].numel, options_of(plan_.buckets[bucket]),
                           [self, bucket](std::exception_ptr error, const CollectiveStats& stats) {
                             self->bucket_done(bucket, error, stats);
                           });
  }

  void bucket_done(std::size_t bucket, std::exception_ptr error, const CollectiveStats& stats) {
    if (!error) copy_back(bucket);
    DoneCallback done;
    CollectiveStats total;
    uint64_t watch_id = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      totals_ += stats;
      --buckets_left_;
      if (!done_ || (!error && buckets_left_ > 0)) return;
      done.swap(done_);
      total = totals_;
      total.elapsed = comm_.executor().now() - *first_start_;
      watch_id = watch_id_;
    }
    comm_.unwatch(watch_id);
    done(error, total);
  }

  void fail_early(std::exception_ptr error) {
    DoneCallback done = take_done();
    if (!done) return;
    CollectiveStats total;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      total = totals_;
    }
    comm_.executor().post([done = std::move(done), error, total] { done(error, total); });
  }

  void copy_back(std::size_t bucket) {
    const auto& plan = plan_.buckets[bucket];
    for (std::size_t k = 0; k < plan.tensors.size(); ++k) {
      const std::size_t tensor = plan.tensors[k];
      const std::size_t numel = plan_.tensor_numels[tensor];
      if (numel > 0) std::memcpy(tensor_data_[tensor], buffers_[bucket].data() + plan.offsets[k], numel * sizeof(float));
    }
  }

  DoneCallback take_done() {
    std::lock_guard<std::mutex> lock(mutex_);
    DoneCallback done;
    done.swap(done_);
    return done;
  }

  Communicator& comm_;
  const BucketPlan plan_;
  const AllreduceOptions options_;
  mutable std::mutex mutex_;
  DoneCallback done_;  // emptied when called
  const uint32_t first_id_;
  std::vector<std::vector<float>> buffers_;
  std::vector<std::size_t> missing_;  // tensors not yet ready, per bucket
  std::vector<float*> tensor_data_;
  std::vector<bool> marked_;
  std::size_t buckets_left_;
  std::size_t started_ = 0;
  std::optional<std::chrono::nanoseconds> first_start_;
  CollectiveStats totals_;
  uint64_t watch_id_ = 0;
};

BucketedAllreduce::BucketedAllreduce(Communicator& comm, const BucketPlan& plan, AllreduceOptions options,
                                     DoneCallback done)
    : state_(std::make_shared<State>(comm, plan, options, std::move(done))) {
  state_->watch_communicator();
  state_->finish_if_empty();
}

void BucketedAllreduce::mark_ready(std::size_t tensor_index, float* data) { state_->mark_ready(tensor_index, data); }
std::size_t BucketedAllreduce::buckets_started() const { return state_->buckets_started(); }

}  // namespace st::collective
