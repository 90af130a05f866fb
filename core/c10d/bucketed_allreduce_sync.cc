// GradientSync for G local workers (and, on request, for one): DDP's bucket
// layout and launch rule re-done on top of ProcessGroupGloo::allreduce,
// because c10d::Reducer serves exactly one replica per process.
//
// Every local replica's parameters carry an autograd hook. A hook adds the
// incoming gradient into the parameter's slot of a flat bucket tensor (the
// first arrival copies, later ones add: the local sum over workers). When
// all G workers have delivered every parameter of a bucket, the bucket is
// ready; ready buckets are launched strictly in bucket order (as the Reducer
// does) so that all ranks issue their collectives in the same sequence,
// which Gloo requires. After the local backward passes, GlooDdp waits for
// every bucket, divides by the number of workers in the job and writes the
// result into replica 0's .grad.
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <fmt/format.h>

#include <mutex>
#include <stdexcept>

#include "core/c10d/gloo_group_state.h"
#include "core/c10d/gradient_sync.h"

namespace st::c10d_ddp {

std::vector<std::vector<std::size_t>> ready_order_buckets(const std::vector<at::Tensor>& parameters,
                                                          int64_t first_cap_bytes, int64_t cap_bytes) {
  const std::size_t count = parameters.size();
  std::vector<at::Tensor> ready_order(parameters.rbegin(), parameters.rend());
  std::vector<int64_t> original_index(count);
  for (std::size_t i = 0; i < count; ++i) original_index[i] = static_cast<int64_t>(count - 1 - i);
  // With explicit tensor indices c10d keeps buckets in the order it cut them
  // (no re-sorting by smallest index), which is the ready order here.
  auto bucket_and_limits = ::c10d::compute_bucket_assignment_by_size(
      ready_order, {static_cast<std::size_t>(first_cap_bytes), static_cast<std::size_t>(cap_bytes)},
      std::vector<bool>(count, false), original_index);
  return std::get<0>(bucket_and_limits);
}

namespace {

struct Bucket {
  std::vector<std::size_t> parameters;
  at::Tensor flat;          // the bucket's gradients, end to end
  std::size_t pending = 0;  // parameters not yet delivered by every worker
  c10::intrusive_ptr<::c10d::Work> work;
};

class BucketedAllreduceSync final : public GradientSync {
 public:
  BucketedAllreduceSync(const GlooGroupState& group, std::vector<std::vector<at::Tensor>> replica_parameters,
                        const GlooDdpOptions& options)
      : group_(group),
        replicas_(std::move(replica_parameters)),
        workers_(static_cast<int>(replicas_.size())),
        workers_in_job_(options.workers_in_job > 0 ? static_cast<double>(options.workers_in_job)
                                                   : static_cast<double>(group.options.world_size) * workers_),
        arrivals_(replicas_.at(0).size(), 0) {
    build_buckets(ready_order_buckets(replicas_[0], options.first_bucket_cap_bytes, options.bucket_cap_bytes));
    register_hooks();
  }

  ~BucketedAllreduceSync() override {
    for (const HookHandle& hook : hooks_) replicas_[hook.worker][hook.parameter].remove_hook(hook.position);
  }

  GradientEngine engine() const override { return GradientEngine::kBucketedAllreduce; }

  void before_forward() override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::fill(arrivals_.begin(), arrivals_.end(), 0);
    for (Bucket& bucket : buckets_) {
      bucket.pending = bucket.parameters.size();
      bucket.work.reset();
    }
    next_to_launch_ = 0;
  }

  void before_backward(int /*worker*/) override {}

  void after_backward() override {
    complete_unused_parameters();
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      wait_for(b);
      buckets_[b].flat.div_(workers_in_job_);
    }
    write_gradients_into_replica_zero();
  }

  std::vector<std::vector<std::size_t>> bucket_layout() const override {
    std::vector<std::vector<std::size_t>> layout;
    for (const Bucket& bucket : buckets_) layout.push_back(bucket.parameters);
    return layout;
  }

 private:
  struct HookHandle {
    int worker;
    std::size_t parameter;
    unsigned position;
  };

  void build_buckets(const std::vector<std::vector<std::size_t>>& layout) {
    slots_.resize(replicas_[0].size());
    bucket_of_.resize(replicas_[0].size());
    for (const std::vector<std::size_t>& indices : layout) {
      Bucket& bucket = buckets_.emplace_back();
      bucket.parameters = indices;
      int64_t elements = 0;
      for (std::size_t i : indices) elements += replicas_[0][i].numel();
      // Same dtype and device across a bucket: c10d's assignment groups by them.
      bucket.flat = at::zeros({elements}, replicas_[0][indices.front()].options().requires_grad(false));
      int64_t offset = 0;
      for (std::size_t i : indices) {
        const at::Tensor& parameter = replicas_[0][i];
        slots_[i] = bucket.flat.narrow(0, offset, parameter.numel()).view(parameter.sizes());
        bucket_of_[i] = buckets_.size() - 1;
        offset += parameter.numel();
      }
    }
  }

  void register_hooks() {
    for (int worker = 0; worker < workers_; ++worker) {
      for (std::size_t i = 0; i < replicas_[worker].size(); ++i) {
        const unsigned position = replicas_[worker][i].register_hook(
            [this, worker, i](const at::Tensor& gradient) { on_gradient(worker, i, gradient); });
        hooks_.push_back({worker, i, position});
      }
    }
  }

  // Runs on the autograd thread of `worker` (its own thread on CPU).
  void on_gradient(int worker, std::size_t parameter, const at::Tensor& gradient) {
    std::lock_guard<std::mutex> lock(mutex_);
    int& arrived = arrivals_[parameter];
    if (arrived == workers_)
      throw std::logic_error(
          fmt::format("bucketed allreduce: parameter {} got a second gradient from worker {} in "
                      "one step (reentrant backward is not supported)",
                      parameter, worker));
    if (arrived == 0)
      slots_[parameter].copy_(gradient);
    else
      slots_[parameter].add_(gradient);
    if (++arrived == workers_) parameter_complete(parameter);
  }

  // Called with mutex_ held.
  void parameter_complete(std::size_t parameter) {
    if (--buckets_[bucket_of_[parameter]].pending > 0) return;
    // Launch in bucket order only: a later bucket that is ready first waits
    // for its predecessors, so every rank's collective sequence is the same.
    while (next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].pending == 0) {
      std::vector<at::Tensor> tensors{buckets_[next_to_launch_].flat};
      buckets_[next_to_launch_].work = group_.process_group->allreduce(tensors);
      ++next_to_launch_;
    }
  }

  // Parameters that took no part in this step (no gradient from some worker)
  // count as zero, so every bucket still launches, in order, on every rank.
  void complete_unused_parameters() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < arrivals_.size(); ++i) {
      if (arrivals_[i] == workers_) continue;
      if (arrivals_[i] == 0) slots_[i].zero_();
      arrivals_[i] = workers_;
      parameter_complete(i);
    }
  }

  void wait_for(std::size_t bucket_index) {
    try {
      buckets_[bucket_index].work->wait();
    } catch (const std::exception& error) {
      throw std::runtime_error(collective_failure(
          group_, fmt::format("allreduce of bucket {} of {}", bucket_index, buckets_.size()), error));
    }
  }

  void write_gradients_into_replica_zero() {
    for (std::size_t i = 0; i < slots_.size(); ++i) {
      at::Tensor& gradient = replicas_[0][i].mutable_grad();
      if (gradient.defined())
        gradient.copy_(slots_[i]);
      else
        gradient = slots_[i].clone();
    }
  }

  const GlooGroupState& group_;
  std::vector<std::vector<at::Tensor>> replicas_;  // [worker][parameter]
  const int workers_;
  const double workers_in_job_;  // the sum is divided by it
  std::vector<Bucket> buckets_;
  std::vector<at::Tensor> slots_;       // per parameter: its view into its bucket
  std::vector<std::size_t> bucket_of_;  // per parameter
  std::vector<int> arrivals_;           // per parameter: workers delivered this step
  std::size_t next_to_launch_ = 0;
  std::vector<HookHandle> hooks_;
  std::mutex mutex_;
};

}  // namespace

std::unique_ptr<GradientSync> make_bucketed_allreduce_sync(const GlooGroupState& group,
                                                           std::vector<std::vector<at::Tensor>> replica_parameters,
                                                           const GlooDdpOptions& options) {
  return std::make_unique<BucketedAllreduceSync>(group, std::move(replica_parameters), options);
}

}  // namespace st::c10d_ddp
