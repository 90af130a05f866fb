#pragma once
// An Executor decorator for sampled CPU stages (node/layer_sampling.h): a
// compute task on a sampled layer is charged as the full layer's. Its
// `work` (elements gathered, copied, loaded, scanned or stepped, indices a
// sparse step touches) is multiplied by that layer's scale, or by the
// model's for a task that covers every layer; forward, backward and
// evaluation work is samples, which sampling does not touch. Everything
// else passes through, so the engine runs unchanged on a sample and every
// backend's compute-time model prices what the full run would do.
#include <functional>
#include <utility>

#include "core/runtime/executor.h"
#include "core/train/node/layer_sampling.h"

namespace st::train {

class SampledCostExecutor final : public runtime::Executor {
 public:
  // `inner` must outlive this object.
  SampledCostExecutor(runtime::Executor& inner, LayerSampling sampling)
      : inner_(inner), sampling_(std::move(sampling)) {}

  runtime::Nanos now() const override { return inner_.now(); }
  void post(runtime::Task task) override { inner_.post(std::move(task)); }
  void post_after(runtime::Nanos delay, runtime::Task task) override { inner_.post_after(delay, std::move(task)); }
  void compute(runtime::Task work, runtime::ComputeCost cost, runtime::Task done) override {
    inner_.compute(std::move(work), full_size(cost), std::move(done));
  }
  void post_progress(int mark, runtime::Task task) override { inner_.post_progress(mark, std::move(task)); }
  void run_until(const std::function<bool()>& finished) override { inner_.run_until(finished); }
  int workers() const override { return inner_.workers(); }

  // `cost` as the full layers would cost (public for tests).
  runtime::ComputeCost full_size(runtime::ComputeCost cost) const;

 private:
  runtime::Executor& inner_;
  const LayerSampling sampling_;
};

}  // namespace st::train
