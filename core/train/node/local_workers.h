#pragma once
// The G local workers of one node: each a thread-level worker with its own
// model replica and data shard, on the CPU or a GPU (TrainConfig::
// compute_device; several workers may share one GPU). A step runs
// forward and backward on every replica as compute tasks on the executor,
// then sums their gradients per layer in worker order (deterministic) into
// the node's gradient buffers. LibTorch stays behind this header.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/runtime/executor.h"
#include "core/train/config.h"
#include "core/train/node/layer_sampling.h"

namespace st::data {
class Dataset;
}

namespace st::train {

class VersionedParameters;
struct Worker;

struct LocalStepTimes {
  double forward_ms = 0;   // mean over workers
  double backward_ms = 0;  // mean over workers
  double gather_ms = 0;    // summing the workers' gradients
  // Forward and backward as the GPU measured them (CUDA events), mean over
  // workers; 0 on the CPU (forward_ms/backward_ms are the measurement there)
  // and in timing mode.
  double device_forward_ms = 0;
  double device_backward_ms = 0;
  double loss = 0;         // mean over workers
  std::vector<double> worker_ms;  // forward + backward per worker
  std::vector<int> batch;         // per worker
};

class LocalWorkers {
 public:
  // Replicas start from identical weights on every node (init seed from the
  // config); worker w of node n reads shard n * G + w of the training set.
  LocalWorkers(const TrainConfig& config, int node, const data::Dataset& train, runtime::Executor& executor);
  ~LocalWorkers();

  std::size_t layers() const;
  // Each layer's elements as the stages see them: the whole layer, or its
  // sample in a timing run with sampled stages (TrainConfig::stage_sample).
  std::vector<std::size_t> layer_numels() const;
  // Which layers are samples of what (whole layers outside sampled runs).
  const LayerSampling& sampling() const;
  std::vector<std::string> layer_names() const;
  std::vector<std::vector<int64_t>> layer_shapes() const;  // each parameter's tensor shape
  std::vector<std::vector<float>> initial_parameters() const;

  // Reads every layer of the master as a forward that wants version
  // `target` sees it (VersionedParameters::read_layer) into staged[l], then
  // copies it into every replica, each a compute task (the read on the
  // node's CPU, each replica's load on its worker's device), then posts
  // done(ms the whole load took). `staged` is resized on first use; the
  // caller keeps it, unchanged until `done` (delay-compensated updates need
  // what the forward used). The master is read when the read task runs. In
  // timing mode (no replicas) nothing is read unless `values_needed`, but
  // the tasks are charged all the same.
  void load(VersionedParameters& master, int target, std::vector<std::vector<float>>& staged, bool values_needed,
            std::function<void(double load_ms)> done);

  // Per-worker batch sizes from the next step on (the controller's split of
  // the global batch; default: the config's batch_per_worker everywhere).
  // Throws std::invalid_argument for a wrong count or a batch below 1.
  void set_batches(const std::vector<int>& batch);

  // Forward and backward on every worker; out[l] = sum over workers of
  // their layer-l gradient weighted by batch / batch_per_worker (1 when
  // batches are equal), so that dividing by the number of workers gives the
  // mean gradient over all samples of the global batch (out is resized on
  // first use). Layer l is summed as soon as every worker's backward has
  // produced it (autograd hooks, model/gradient_hooks.h), while backward
  // goes on with earlier layers; `on_layer(l)` is then posted with out[l]
  // final. `done` is posted once every backward has ended and every layer is
  // summed; the replicas' gradients are not touched again before it.
  void compute_gradients(std::vector<std::vector<float>>& out, std::function<void(std::size_t layer)> on_layer,
                         std::function<void(const LocalStepTimes&)> done);
  void compute_gradients(std::vector<std::vector<float>>& out, std::function<void(const LocalStepTimes&)> done) {
    compute_gradients(out, {}, std::move(done));
  }

  // Test accuracy of `parameters` on the first `samples` test samples (0:
  // all), on a dedicated evaluation replica. Blocking: call from a task.
  struct Accuracy {
    double accuracy = 0;
    double loss = 0;
    std::size_t samples = 0;
  };
  Accuracy evaluate(const std::vector<std::vector<float>>& parameters, const data::Dataset& test,
                    std::size_t samples);

 private:
  struct Step;
  void load_replicas(const std::vector<std::vector<float>>& staged, double elements, runtime::Task done);
  void forward(Worker& worker);
  void backward(Worker& worker);
  void run_worker(std::size_t w);
  void worker_layer_ready(std::size_t layer);
  void gather_layer(std::size_t layer);
  void backward_ended(Worker& worker);
  void step_part_done();
  void sum_layer(std::size_t layer);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace st::train
