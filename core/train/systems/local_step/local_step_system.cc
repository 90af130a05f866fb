#include "core/train/systems/local_step/local_step_system.h"

#include <algorithm>
#include <chrono>

#include "core/optim/dense_sgd.h"

namespace st::train {

using runtime::Nanos;

LocalStepSystem::LocalStepSystem(NodeContext& ctx)
    : ctx_(ctx), numels_(ctx.workers.layer_numels()) {
  const auto& c = ctx.config;
  // The same dense step as ddp's (core/train/systems/sync/sync_system.h), so that
  // these systems reduce to ddp exactly where their algorithms do.
  optimizer_ = std::make_unique<optim::DenseSgd>(optim::SgdOptions{c.lr, c.momentum, 0.0, false, c.weight_decay});
  const auto names = ctx.workers.layer_names();
  for (std::size_t l = 0; l < numels_.size(); ++l) {
    optim_states_.push_back(optimizer_->make_state(numels_[l], names[l]));
    total_numel_ += numels_[l];
  }
}

LocalStepSystem::~LocalStepSystem() = default;

void LocalStepSystem::start(runtime::Task finished) {
  finished_ = std::move(finished);
  run_iteration(0);
}

void LocalStepSystem::before_iteration(int, IterationRecord&, runtime::Task next) { next(); }
void LocalStepSystem::before_step(int, IterationRecord&, runtime::Task next) { next(); }
void LocalStepSystem::after_step(int, IterationRecord&, runtime::Task next) { next(); }
void LocalStepSystem::drain(IterationRecord&, runtime::Task next) { next(); }

float LocalStepSystem::node_mean_scale() const { return 1.0f / static_cast<float>(ctx_.config.gpus_of(ctx_.rank)); }
float LocalStepSystem::world_mean_scale() const {
  return 1.0f / static_cast<float>(ctx_.config.total_workers());
}

void LocalStepSystem::run_iteration(int t) {
  record_ = IterationRecord{};
  record_.rank = ctx_.rank;
  record_.iteration = t;
  record_.start_s = std::chrono::duration<double>(ctx_.executor.now()).count();
  before_iteration(t, record_, [this, t] {
    ctx_.workers.load(ctx_.master, t, staged_, false, [this, t](double load_ms) {
      record_.load_ms = load_ms;
      ctx_.workers.compute_gradients(grads_, [this, t](const LocalStepTimes& times) {
        record_local_times(record_, times);
        after_gradients(t);
      });
    });
  });
}

void LocalStepSystem::after_gradients(int t) {
  before_step(t, record_, [this, t] {
    const Nanos step_start = ctx_.executor.now();
    step_master(t, step_scale(t), [this, t, step_start] {
      record_.optimize_ms = detail::ms_since(ctx_.executor, step_start);
      after_step(t, record_, [this, t] {
        record_.iteration_ms =
            (std::chrono::duration<double>(ctx_.executor.now()).count() - record_.start_s) * 1e3;
        if (t + 1 < ctx_.config.iterations) {
          report(t);
          return run_iteration(t + 1);
        }
        drain(record_, [this, t] {
          report(t);
          ctx_.executor.post(finished_);
        });
      });
    });
  });
}

void LocalStepSystem::report(int t) { ctx_.on_iteration_done(t, record_); }

// The dense step runs where DDP runs it, on the GPU (device 0).
void LocalStepSystem::step_master(int t, float scale, runtime::Task done) {
  ctx_.executor.compute(
      [this, t, scale] {
        for (std::size_t l = 0; l < numels_.size(); ++l) {
          optim_states_[l]->lr_scale = lr_scale_at(ctx_.config, t);
          auto& g = grads_[l];
          for (auto& v : g) v *= scale;
          ctx_.master.with_layer(l, [&](float* data, std::size_t n) {
            optimizer_->step(Span<float>(data, n), Span<const float>(g), *optim_states_[l]);
          });
        }
      },
      runtime::ComputeCost{runtime::TaskKind::kOptimizeDense, -1, static_cast<double>(total_numel_), ctx_.rank, 0},
      [this, t, done] {
        for (std::size_t l = 0; l < numels_.size(); ++l) ctx_.master.publish(l, t + 1);
        done();
      });
}

void LocalStepSystem::copy_master_to(float* flat) {
  for (std::size_t l = 0; l < numels_.size(); ++l) {
    ctx_.master.with_layer(l, [&](float* data, std::size_t n) { std::copy(data, data + n, flat); });
    flat += numels_[l];
  }
}

void LocalStepSystem::copy_master_from(const float* flat) {
  for (std::size_t l = 0; l < numels_.size(); ++l) {
    ctx_.master.with_layer(l, [&](float* data, std::size_t n) { std::copy(flat, flat + n, data); });
    flat += numels_[l];
  }
}

void LocalStepSystem::add_difference_to_master(const float* a, const float* b) {
  for (std::size_t l = 0; l < numels_.size(); ++l) {
    ctx_.master.with_layer(l, [&](float* data, std::size_t n) {
      for (std::size_t i = 0; i < n; ++i) data[i] += a[i] - b[i];
    });
    a += numels_[l];
    b += numels_[l];
  }
}

}  // namespace st::train
