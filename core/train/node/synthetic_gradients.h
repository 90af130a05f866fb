#pragma once
// Gradients for timing runs (TrainConfig::math == "timing"), where forward
// and backward math is skipped but compression, exchange and the optimizer
// run for real: they must see gradients shaped like real ones, or
// thresholdv16's threshold estimate and the sparse traffic would not behave
// as in training. One real forward and backward of the model on a small batch
// records, per layer, the distribution of gradient magnitudes (|g| at
// kSamples evenly spaced ranks, exact zeros and the tail included); a small
// pool of buffers per layer is drawn from that empirical distribution once, and each call
// hands out a pool buffer rotated by a fresh offset, so that nodes, workers
// and iterations get different large entries at the cost of a copy.
// Torch-free header.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/train/node/layer_sampling.h"

namespace st::data {
class Dataset;
}

namespace st::train {

class SyntheticGradients {
 public:
  // Builds the model (`model` name, the dataset's shape, `seed`), runs one
  // forward and backward on the dataset's first `batch` training samples and
  // draws the pools. Shared by every node of a process: a run with many
  // nodes pays for one model and one pool. With `sample` enabled each
  // layer's pool buffers hold only its sample's elements (the first ones of
  // what the full buffers would hold): sampling().numels().
  static std::shared_ptr<const SyntheticGradients> shared(const model::ModelSpec& model, const data::Dataset& train,
                                                          uint64_t seed, StageSampling sample = {});

  const std::vector<std::string>& names() const { return names_; }
  // The model's layers, whole.
  const std::vector<std::size_t>& numels() const { return numels_; }
  // Which of them fill() hands out as samples, and how large.
  const LayerSampling& sampling() const { return sampling_; }
  const std::vector<std::vector<int64_t>>& shapes() const { return shapes_; }

  // out[0, n) = scale x one of layer `layer`'s pool buffers (n: its sample's
  // size, sampling().numels()[layer]), rotated by
  // an offset derived from `draw` (callers mix node, iteration and layer in).
  void fill(std::size_t layer, uint64_t draw, float scale, float* out) const;

  static constexpr int kRecordBatch = 4;
  static constexpr int kPoolBuffers = 2;
  static constexpr int kSamples = 4096;

 private:
  SyntheticGradients() = default;
  void record_and_draw(const model::ModelSpec& model, const data::Dataset& train, uint64_t seed, StageSampling sample);

  std::vector<std::string> names_;
  std::vector<std::size_t> numels_;
  std::vector<std::vector<int64_t>> shapes_;
  LayerSampling sampling_;
  std::vector<std::vector<std::vector<float>>> pool_;  // [layer][buffer]
};

}  // namespace st::train
