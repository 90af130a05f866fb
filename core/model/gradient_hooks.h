#pragma once
// Per-parameter gradient readiness during backward, the way c10d's Reducer
// sees it: a post hook on each parameter's gradient accumulator fires right
// after autograd has written that parameter's .grad(), while backward goes
// on with the layers before it. The engine hands a layer to its system from
// there (DDP buckets, StellaTrain's per-layer pipeline); `bench profile`
// times each parameter's readiness. Torch-free header.
#include <cstddef>
#include <functional>
#include <memory>

namespace st::model {

class Model;

class GradientReadyHooks {
 public:
  // `on_ready(p)` runs on the thread running backward, once per backward for
  // every parameter p (registration order index) that receives a gradient.
  // The hooks stay installed while this object lives; the model must outlive it.
  GradientReadyHooks(const Model& model, std::function<void(std::size_t)> on_ready);
  ~GradientReadyHooks();
  GradientReadyHooks(const GradientReadyHooks&) = delete;
  GradientReadyHooks& operator=(const GradientReadyHooks&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::model
