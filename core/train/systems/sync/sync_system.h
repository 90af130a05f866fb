#pragma once
// The synchronous base and DDP, shared by sync_systems.cc (ddp, topk-sync)
// and ddp_hook_systems.cc (ddp-fp16, ddp-powersgd), which subclass them.
//
// SyncSystem loads the parameters, runs forward and backward, reduces the
// gradients across nodes, then takes one standard (dense) SGD step on every
// layer before the next iteration starts. DdpSystem is PyTorch DDP's
// algorithm: a dense bucketed ring allreduce (25 MB buckets in reverse layer
// order, 1 MB first bucket), each bucket started during backward once
// backward has produced all of its layers.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/collective/bucketed_allreduce.h"
#include "core/optim/dense_sgd.h"
#include "core/train/system.h"

namespace st::train {

class SyncSystem : public System {
 public:
  explicit SyncSystem(NodeContext& ctx)
      : ctx_(ctx),
        numels_(ctx.workers.layer_numels()),
        optimizer_(optim::SgdOptions{ctx.config.lr, ctx.config.momentum, 0.0, false, ctx.config.weight_decay}) {
    const auto& c = ctx.config;
    const auto names = ctx.workers.layer_names();
    for (std::size_t l = 0; l < numels_.size(); ++l) optim_states_.push_back(optimizer_.make_state(numels_[l], names[l]));
    scale_ = 1.0f / static_cast<float>(c.total_workers());
  }

  void start(runtime::Task finished) override {
    finished_ = std::move(finished);
    run_iteration(0);
  }

 protected:
  using Nanos = runtime::Nanos;

  // The factor the step applies to every summed gradient: 1 / (all workers)
  // by default, since reduce() leaves sums. A system whose reduce already
  // leaves the mean (ddp-fp16 divides before its allreduce) sets 1.
  void set_gradient_scale(float scale) { scale_ = scale; }

  // A system that reduces layers while backward still runs (ddp) returns
  // the callback to hand each summed layer to, and calls `done` once every
  // grads[l] holds the sum over all nodes. The others return nothing and
  // reduce() runs after backward.
  virtual std::function<void(std::size_t layer)> reduce_during_backward(int, std::vector<std::vector<float>>&,
                                                                        IterationRecord&, std::function<void()>) {
    return {};
  }
  // Replaces grads[l] by the sum over all nodes, then calls done (from a task).
  virtual void reduce(int, std::vector<std::vector<float>>&, IterationRecord&, std::function<void()>) {
    throw std::logic_error(name() + ": reduce() called on a system that reduces during backward");
  }

  NodeContext& ctx_;
  std::vector<std::size_t> numels_;

  std::size_t total_numel() const {
    std::size_t total = 0;
    for (auto n : numels_) total += n;
    return total;
  }

 private:
  void run_iteration(int t) {
    if (t == ctx_.config.iterations) {
      ctx_.executor.post(finished_);
      return;
    }
    record_ = IterationRecord{};
    record_.rank = ctx_.rank;
    record_.iteration = t;
    record_.start_s = std::chrono::duration<double>(ctx_.executor.now()).count();
    ctx_.workers.load(ctx_.master, t, staged_, false, [this, t](double load_ms) {
      record_.load_ms = load_ms;
      compute_gradients(t);
    });
  }

  void compute_gradients(int t) {
    // The step waits for both the gradients (times recorded) and the reduce.
    auto parts_left = std::make_shared<std::atomic<int>>(2);
    auto part_done = [this, t, parts_left] {
      if (parts_left->fetch_sub(1) == 1) step(t);
    };
    auto per_layer = reduce_during_backward(t, grads_, record_, part_done);
    ctx_.workers.compute_gradients(grads_, per_layer, [this, t, per_layer, part_done](const LocalStepTimes& times) {
      record_local_times(record_, times);
      part_done();
      if (per_layer) return;
      const Nanos reduce_start = ctx_.executor.now();
      reduce(t, grads_, record_, [this, reduce_start, part_done] {
        record_.exchange_ms = detail::ms_since(ctx_.executor, reduce_start);
        part_done();
      });
    });
  }

  // The dense step runs where DDP runs it, on the GPU (device 0).
  void step(int t) {
    const Nanos step_start = ctx_.executor.now();
    ctx_.executor.compute([this, t] { step_all_layers(t); },
                          runtime::ComputeCost{runtime::TaskKind::kOptimizeDense, -1, static_cast<double>(total_numel()), ctx_.rank, 0},
                          [this, t, step_start] {
                            for (std::size_t l = 0; l < numels_.size(); ++l) ctx_.master.publish(l, t + 1);
                            record_.optimize_ms = detail::ms_since(ctx_.executor, step_start);
                            record_.iteration_ms =
                                (std::chrono::duration<double>(ctx_.executor.now()).count() - record_.start_s) * 1e3;
                            ctx_.on_iteration_done(t, record_);
                            run_iteration(t + 1);
                          });
  }

  void step_all_layers(int t) {
    for (std::size_t l = 0; l < numels_.size(); ++l) {
      optim_states_[l]->lr_scale = lr_scale_at(ctx_.config, t);
      auto& g = grads_[l];
      for (auto& v : g) v *= scale_;  // mean over all workers
      ctx_.master.with_layer(l, [&](float* data, std::size_t n) {
        optimizer_.step(Span<float>(data, n), Span<const float>(g), *optim_states_[l]);
      });
    }
  }

  // The dense SGD step: bitwise what the sparse SGD over every index gave,
  // faster (core/optim/dense_sgd.h).
  optim::DenseSgd optimizer_;
  std::vector<std::unique_ptr<optim::DenseSgdState>> optim_states_;
  std::vector<std::vector<float>> grads_;
  std::vector<std::vector<float>> staged_;  // the loaded parameters
  IterationRecord record_;
  float scale_ = 1.0f;
  runtime::Task finished_;
};

// `options` and `name` let DDP variants (ddp-fp16) change only the wire.
class DdpSystem : public SyncSystem {
 public:
  explicit DdpSystem(NodeContext& ctx, collective::AllreduceOptions options = {}, std::string name = "ddp")
      : SyncSystem(ctx), options_(options), name_(std::move(name)) {
    // Buckets in the order backward produces gradients: last layer first.
    // Sampled stages: buckets as the full layers would form them, each
    // sent at its full size.
    std::vector<std::size_t> reversed(numels_.rbegin(), numels_.rend());
    const auto& full = ctx.workers.sampling().full_numels();
    plan_ = collective::plan_sampled_buckets(reversed, std::vector<std::size_t>(full.rbegin(), full.rend()));
  }
  std::string name() const override { return name_; }

 protected:
  // As c10d's Reducer: a bucket's allreduce starts once backward has
  // produced all of its layers, while backward goes on.
  std::function<void(std::size_t)> reduce_during_backward(int, std::vector<std::vector<float>>& grads,
                                                          IterationRecord& record, std::function<void()> done) override {
    auto first_launch = std::make_shared<Nanos>(Nanos::min());
    auto allreduce = std::make_shared<collective::BucketedAllreduce>(
        ctx_.comm, plan_, options_,
        [this, &record, done, first_launch](std::exception_ptr error, const collective::CollectiveStats& stats) {
          if (error) std::rethrow_exception(error);
          record.bytes_sent = stats.bytes_sent;
          record.bytes_received = stats.bytes_received;
          // From the first bucket's launch: the exchange, overlapped or not.
          record.exchange_ms = detail::ms_since(ctx_.executor, *first_launch);
          done();
        });
    keep_alive_ = allreduce;
    const std::size_t layers = numels_.size();  // grads is sized by the first backward
    return [this, allreduce, first_launch, &grads, layers](std::size_t l) {
      {
        std::lock_guard<std::mutex> lock(launch_mutex_);
        if (*first_launch == Nanos::min()) *first_launch = ctx_.executor.now();
      }
      allreduce->mark_ready(layers - 1 - l, grads[l].data());
    };
  }

 private:
  collective::AllreduceOptions options_;
  std::string name_;
  collective::BucketPlan plan_;
  std::mutex launch_mutex_;
  std::shared_ptr<collective::BucketedAllreduce> keep_alive_;
};

}  // namespace st::train
