#include "core/train/systems/stellatrain/staleness_compensation.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/optim/sparse_optimizer.h"
#include "core/train/config.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"

namespace st::train {
namespace {

class NoCompensation final : public StalenessCompensation {};

// The updates a stale reader misses, extrapolated from the momentum buffer
// (the optimizer's extrapolate shows them).
class Prediction : public StalenessCompensation {
 public:
  bool shapes_view() const override { return true; }
  uint32_t steps_ahead(int missing) const override { return missing > 0 ? static_cast<uint32_t>(missing) : 0; }
};

// Prediction, plus this node's own compressed gradient of the missing
// iteration standing in for the mean of all nodes': the step the master
// will take for iteration t if every node sent what this one did.
class Lookahead final : public Prediction {
 public:
  explicit Lookahead(const CompensationInputs& inputs)
      : config_(inputs.config), local_workers_(inputs.local_workers), own_chunk_(inputs.own_chunk) {}

  bool forward_waits_for_own_compression() const override { return true; }

  // out -= lr x (own chunk of iteration t) / local workers: the chunk sums
  // this node's workers, so chunk / G is its mean per worker, which stands
  // in for the mean over every worker (clusters of unequal size included).
  void adjust_view(std::size_t layer, int target, int missing, float* out) override {
    if (missing != 1) return;
    const int t = target - 1;
    const auto& chunk = own_chunk_(t, layer);
    const float step = static_cast<float>(-config_.lr * lr_scale_at(config_, t) / local_workers_);
    for (std::size_t j = 0; j < chunk.count; ++j) out[chunk.indices[j]] += step * chunk.values[j];
  }

 private:
  const TrainConfig& config_;
  int local_workers_;
  std::function<const compress::SparseChunk&(int, std::size_t)> own_chunk_;
};

// DC-ASGD: the gradient was taken at the parameters the forward used, w_f; a
// first-order Taylor step towards the current parameters w_now, with the
// Hessian approximated by lambda g*g, gives g + lambda g*g*(w_now - w_f).
// Only the listed entries change.
class DelayCompensation final : public StalenessCompensation {
 public:
  explicit DelayCompensation(const CompensationInputs& inputs)
      : optimizer_(inputs.optimizer),
        lambda_(static_cast<float>(inputs.options.dc_lambda)),
        forward_values_(inputs.forward_values),
        current_(inputs.layers) {}

  bool keeps_forward_values() const override { return true; }

  void correct(int t, std::size_t layer, Span<const float> stored, const optim::ParamState& state,
               compress::SparseChunk& sum) override {
    auto& now = current_[layer];
    now.resize(stored.size());
    optimizer_.extrapolate(stored, state, 0, Span<float>(now));  // what a reader sees now
    const auto& used = forward_values_(t, layer);
    for (std::size_t j = 0; j < sum.count; ++j) {
      const uint32_t i = sum.indices[j];
      const float g = sum.values[j];
      sum.values[j] = g + lambda_ * g * g * (now[i] - used[i]);
    }
  }

 private:
  const optim::SparseOptimizer& optimizer_;
  float lambda_;
  std::function<const std::vector<float>&(int, std::size_t)> forward_values_;
  std::vector<std::vector<float>> current_;  // [layer]: scratch, under the layer's lock
};

}  // namespace

std::unique_ptr<StalenessCompensation> make_staleness_compensation(const CompensationInputs& inputs) {
  const auto& name = inputs.options.compensation;
  if (name == "none") return std::make_unique<NoCompensation>();
  if (name == "predict") return std::make_unique<Prediction>();
  if (name == "lookahead") return std::make_unique<Lookahead>(inputs);
  if (name == "dc") return std::make_unique<DelayCompensation>(inputs);
  throw std::invalid_argument(
      fmt::format("staleness compensation '{}' is not one of none, predict, lookahead, dc", name));
}

}  // namespace st::train
