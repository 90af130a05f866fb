#pragma once
// Sampled CPU stages (timing mode, docs/sim-compute.md "Sampled stages"): every layer
// larger than the floor runs gathering, compression, error feedback, the
// exchange's arithmetic and the optimizer on a fixed sample of its elements,
// and everything the simulator charges for it is scaled back to the full
// layer: compute tasks by SampledCostExecutor (core/train/run/
// sampled_cost_executor.h), messages by the collectives' wire scale
// (core/collective/wire_scale.h), which a simulated network carries at
// full size. A timing run's gradients are synthetic draws from each layer's
// recorded magnitudes (node/synthetic_gradients.h), so a sample of a layer
// is distributed as the layer is: the sparsifier keeps the same share of
// it, and the count it keeps, times the scale, is what the full layer
// would have sent. Never used where accuracy is measured (full math).
// Torch-free header.
#include <cstddef>
#include <vector>

namespace st::train {

struct StageSampling {
  // Share of each layer's elements the stages run on; 0: full size.
  double fraction = 0;
  // The smallest sample: a layer of at most this many elements is kept
  // whole, and no sample is smaller (rounded up to whole blocks of 16, the
  // block sparsifier's unit).
  std::size_t min_elements = 4096;
  bool enabled() const { return fraction > 0; }
};

class LayerSampling {
 public:
  // Nothing sampled.
  LayerSampling() = default;
  // Each layer's sample size from its full size; with sampling disabled
  // every layer is whole. Throws std::invalid_argument for a fraction
  // outside [0, 1] or a floor below 16.
  LayerSampling(std::vector<std::size_t> full_numels, StageSampling sampling);

  // True when at least one layer runs on a sample.
  bool sampled() const { return sampled_; }
  std::size_t layers() const { return full_.size(); }
  const std::vector<std::size_t>& full_numels() const { return full_; }
  // What the stages run on, per layer.
  const std::vector<std::size_t>& numels() const { return numels_; }
  // Full elements per sampled element of `layer` (1 for a whole layer).
  double scale(std::size_t layer) const;
  // The same over the whole model (a task that covers every layer).
  double total_scale() const { return total_scale_; }

 private:
  std::vector<std::size_t> full_;
  std::vector<std::size_t> numels_;
  double total_scale_ = 1;
  bool sampled_ = false;
};

}  // namespace st::train
