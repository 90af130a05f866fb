#pragma once
// Plain single-process training and evaluation on a Dataset: what tests,
// real-gradient benchmarks and accuracy checks need. (The distributed
// systems live in core/train/; this is the local reference loop.)
#include <cstddef>
#include <memory>
#include <vector>

#include "core/model/model.h"

namespace st::data {
class Dataset;
class BatchStream;
struct Batch;
}  // namespace st::data

namespace st::model {

// Forward, mean cross-entropy, backward: gradients accumulate into the
// parameters' .grad(). Returns the loss.
double loss_and_backward(const Model& model, const data::Batch& batch);

// All parameter gradients flattened in parameter order; a parameter without a
// gradient contributes zeros, so the layout always matches parameters().
std::vector<float> flatten_gradients(const Model& model);

struct SgdSettings {
  double lr = 0.01;
  double momentum = 0.9;
  double weight_decay = 0.0;
};

// torch::optim::SGD over a model's parameters; keeps momentum across calls.
class SgdTrainer {
 public:
  SgdTrainer(Model model, const SgdSettings& settings);
  ~SgdTrainer();
  SgdTrainer(const SgdTrainer&) = delete;
  SgdTrainer& operator=(const SgdTrainer&) = delete;

  // One step on `batch` (zero grads, forward, backward, update); returns the loss.
  double step(const data::Batch& batch);
  // `steps` steps on batches of `batch_size` from `stream`; returns the mean loss.
  double train(const data::Dataset& dataset, data::BatchStream& stream, int steps, std::size_t batch_size);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

struct Evaluation {
  double accuracy = 0.0;   // fraction correct, 0..1
  double mean_loss = 0.0;  // mean cross-entropy
  std::size_t samples = 0;
};

// Evaluates on samples [0, max_samples) (all when 0) in eval mode without
// gradients, then restores the model's training mode.
Evaluation evaluate(const Model& model, const data::Dataset& dataset, std::size_t max_samples = 0,
                    std::size_t batch_size = 256);

// Sets LibTorch's intra-op thread count for a scope and restores it after.
// LibTorch starts with 1 thread on these machines; with several processes or
// background load 1 per process is fastest (measured on the build machine).
class ThreadCountGuard {
 public:
  explicit ThreadCountGuard(int threads);
  ~ThreadCountGuard();
  ThreadCountGuard(const ThreadCountGuard&) = delete;
  ThreadCountGuard& operator=(const ThreadCountGuard&) = delete;

 private:
  int previous_;
};

}  // namespace st::model
