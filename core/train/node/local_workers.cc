#include "core/train/node/local_workers.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <utility>

#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/device/compute_device.h"
#include "core/device/staging.h"
#include "core/device/torch_device.h"
#include "core/model/gradient_hooks.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/train/node/synthetic_gradients.h"
#include "core/train/node/versioned_parameters.h"
#include "core/train/node/worker_samplers.h"

namespace st::train {
namespace {

double ms_between(runtime::Nanos a, runtime::Nanos b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

model::ModelShape shape_of(const data::Dataset& d) {
  const auto s = d.image_shape();
  return {s.channels, s.height, s.width, d.classes()};
}


}  // namespace

struct Worker {
  std::unique_ptr<model::Model> model;  // none in timing mode
  data::BatchStream stream;
  std::vector<at::Tensor> params;  // model.parameters(), taken once
  LocalStepTimes times;
  at::Tensor loss;  // between forward and backward
  int batch = 0;
  std::vector<char> produced;  // per layer: this backward has written its gradient
  std::unique_ptr<model::GradientReadyHooks> hooks;
  torch::Device device = torch::kCPU;
  // How gradients reach host memory and parameters come back (direct on
  // the CPU, copies on a side stream on a GPU; core/device/staging.h).
  std::unique_ptr<device::WorkerStaging> staging;
};

// One compute_gradients call in flight.
struct LocalWorkers::Step {
  std::vector<std::vector<float>>* out = nullptr;
  std::function<void(std::size_t)> on_layer;
  std::function<void(const LocalStepTimes&)> done;
  std::unique_ptr<std::atomic<std::size_t>[]> workers_ready;  // per layer
  std::atomic<std::size_t> parts_left{0};  // layer sums + backwards still to finish
  std::mutex mutex;
  runtime::Nanos last_backward_end{0};
};

struct LocalWorkers::Impl {
  const TrainConfig config;
  const data::Dataset& train;
  runtime::Executor& executor;
  int node = 0;
  std::vector<std::unique_ptr<Worker>> workers;
  std::unique_ptr<model::Model> evaluator;
  std::vector<std::string> names;
  // Each layer as the stages see it: whole, or its sample in a timing run
  // with sampled stages.
  LayerSampling sampling;
  const std::vector<std::size_t>& numels() const { return sampling.numels(); }
  // Timing mode (TrainConfig::math == "timing"): no replicas, no math.
  std::shared_ptr<const SyntheticGradients> synthetic;
  uint64_t steps = 0;  // compute_gradients calls so far
  Step step;
};

LocalWorkers::LocalWorkers(const TrainConfig& config, int node, const data::Dataset& train,
                           runtime::Executor& executor)
    : impl_(new Impl{config, train, executor, node, {}, {}, {}, {}, {}, 0, {}}) {
  if (config.math == "timing") {
    impl_->synthetic = SyntheticGradients::shared(config.model_spec(), train, config.seed, config.stage_sample);
    impl_->sampling = impl_->synthetic->sampling();
    impl_->names = impl_->synthetic->names();
    for (int w = 0; w < config.gpus_of(node); ++w)
      impl_->workers.push_back(std::make_unique<Worker>(
          Worker{nullptr, data::BatchStream(data::ShardSampler(train.size(), 1, 0, config.seed)), {}, {}, {},
                 static_cast<int>(config.batch_per_worker), std::vector<char>(impl_->numels().size(), 0), {},
                 torch::kCPU, {}}));
    return;
  }
  const auto compute_device = device::parse_compute_device(config.compute_device);
  device::require_available(compute_device);
  const std::vector<data::ShardSampler> samplers = worker_samplers(config, train, node);
  for (int w = 0; w < config.gpus_of(node); ++w) {
    const data::ShardSampler& sampler = samplers[static_cast<std::size_t>(w)];
    // Same init seed everywhere: every replica starts from identical weights.
    auto worker = std::make_unique<Worker>(
        Worker{std::make_unique<model::Model>(model::make_model(config.model_spec(), shape_of(train), config.seed)),
               data::BatchStream(sampler), {}, {}, {}, static_cast<int>(config.batch_per_worker), {}, {}, torch::kCPU, {}});
    // Initialised on the CPU from the seed, then moved: identical weights on every device.
    worker->device = device::torch_device(compute_device, w);
    if (compute_device.is_cuda()) worker->model->to(worker->device);
    worker->params = worker->model->parameters();
    worker->produced.assign(worker->params.size(), 0);
    worker->staging = device::make_worker_staging(compute_device, w, worker->params);
    Worker* raw = worker.get();
    // On the thread running backward: start the layer's way to host memory,
    // mark it, and let the executor release it when the backward has got
    // that far on its clock.
    worker->hooks = std::make_unique<model::GradientReadyHooks>(*worker->model, [this, raw](std::size_t layer) {
      raw->staging->stage(layer, raw->params[layer].grad());
      raw->produced[layer] = 1;
      impl_->executor.post_progress(static_cast<int>(layer), [this, layer] { worker_layer_ready(layer); });
    });
    impl_->workers.push_back(std::move(worker));
  }
  std::vector<std::size_t> numels;
  for (const auto& p : impl_->workers.front()->params) numels.push_back(static_cast<std::size_t>(p.numel()));
  for (const auto& p : impl_->workers.front()->model->named_parameters()) impl_->names.push_back(p.name);
  impl_->sampling = LayerSampling(std::move(numels), {});
  impl_->evaluator = std::make_unique<model::Model>(model::make_model(config.model_spec(), shape_of(train), config.seed));
  if (compute_device.is_cuda()) impl_->evaluator->to(impl_->workers.front()->device);
}

LocalWorkers::~LocalWorkers() = default;

std::size_t LocalWorkers::layers() const { return impl_->numels().size(); }

std::vector<std::size_t> LocalWorkers::layer_numels() const { return impl_->numels(); }

const LayerSampling& LocalWorkers::sampling() const { return impl_->sampling; }

std::vector<std::string> LocalWorkers::layer_names() const { return impl_->names; }

std::vector<std::vector<int64_t>> LocalWorkers::layer_shapes() const {
  if (impl_->synthetic) return impl_->synthetic->shapes();
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& p : impl_->workers.front()->params) shapes.push_back(p.sizes().vec());
  return shapes;
}

// Timing mode: parameter values do not change what is timed; zeros spare
// building a replica per node.
std::vector<std::vector<float>> LocalWorkers::initial_parameters() const {
  std::vector<std::vector<float>> out;
  if (impl_->synthetic) {
    for (auto n : impl_->numels()) out.emplace_back(n, 0.0f);
    return out;
  }
  for (const auto& p : impl_->workers.front()->model->parameters()) {
    const auto c = p.detach().to(torch::kCPU).contiguous();
    out.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

// Two stages, each a compute task so that every executor charges it (the
// simulated one prices a read out of the master as a copy, or as a pass
// through its view, and a replica's load as a host copy plus, on a GPU, the
// transfer): the read on the node's CPU, then one load per replica on its
// worker's device, in parallel. In timing mode the work is skipped (no
// replicas; values only when asked) but the tasks are still charged.
void LocalWorkers::load(VersionedParameters& master, int target, std::vector<std::vector<float>>& staged,
                        bool values_needed, std::function<void(double load_ms)> done) {
  auto& ex = impl_->executor;
  const auto started = ex.now();
  double elements = 0;
  for (auto n : impl_->numels()) elements += static_cast<double>(n);
  const bool read = !impl_->synthetic || values_needed;
  const auto kind = master.has_view() ? runtime::TaskKind::kView : runtime::TaskKind::kCopy;
  ex.compute(
      [&master, &staged, target, read] {
        if (!read) return;
        staged.resize(master.layers());
        for (std::size_t l = 0; l < master.layers(); ++l) {
          staged[l].resize(master.numel(l));
          master.read_layer(l, target, staged[l].data());
        }
      },
      runtime::ComputeCost{kind, -1, elements, impl_->node, -1},
      [this, &staged, elements, started, done = std::move(done)]() mutable {
        load_replicas(staged, elements, [this, started, done = std::move(done)] {
          done(ms_between(started, impl_->executor.now()));
        });
      });
}

void LocalWorkers::load_replicas(const std::vector<std::vector<float>>& staged, double elements, runtime::Task done) {
  auto left = std::make_shared<std::atomic<std::size_t>>(impl_->workers.size());
  auto finished = std::make_shared<runtime::Task>(std::move(done));
  for (std::size_t w = 0; w < impl_->workers.size(); ++w) {
    Worker* worker = impl_->workers[w].get();
    impl_->executor.compute(
        [this, worker, &staged] {
          if (!impl_->synthetic) worker->staging->load(staged, worker->params);
        },
        runtime::ComputeCost{runtime::TaskKind::kLoad, -1, elements, impl_->node, static_cast<int>(w)},
        [left, finished] {
          if (left->fetch_sub(1) == 1) (*finished)();
        });
  }
}

void LocalWorkers::set_batches(const std::vector<int>& batch) {
  if (batch.size() != impl_->workers.size())
    throw std::invalid_argument(fmt::format("set_batches: {} batches for {} workers", batch.size(), impl_->workers.size()));
  for (int b : batch)
    if (b < 1) throw std::invalid_argument(fmt::format("set_batches: batch {} is below 1", b));
  for (std::size_t w = 0; w < batch.size(); ++w) impl_->workers[w]->batch = batch[w];
}

// Forward and backward are compute tasks on the worker's device, and each
// layer's sum a compute task on the node's CPU, so that every executor
// charges them separately: the simulated one prices each by its compute-time
// model (and releases each layer at its own virtual time inside backward,
// Executor::post_progress); the times below are executor durations either way.
void LocalWorkers::compute_gradients(std::vector<std::vector<float>>& out, std::function<void(std::size_t)> on_layer,
                                     std::function<void(const LocalStepTimes&)> done) {
  Step& step = impl_->step;
  const std::size_t layers = impl_->numels().size();
  out.resize(layers);
  step.out = &out;
  step.on_layer = std::move(on_layer);
  step.done = std::move(done);
  if (!step.workers_ready) step.workers_ready.reset(new std::atomic<std::size_t>[layers]);
  for (std::size_t l = 0; l < layers; ++l) step.workers_ready[l] = 0;
  step.parts_left = layers + impl_->workers.size();
  step.last_backward_end = runtime::Nanos{0};
  ++impl_->steps;
  for (std::size_t w = 0; w < impl_->workers.size(); ++w) run_worker(w);
}

void LocalWorkers::run_worker(std::size_t w) {
  auto& ex = impl_->executor;
  Worker* worker = impl_->workers[w].get();
  std::fill(worker->produced.begin(), worker->produced.end(), 0);
  const double batch = static_cast<double>(worker->batch);
  const int device = static_cast<int>(w);
  const auto t0 = ex.now();
  ex.compute([this, worker] { forward(*worker); }, runtime::ComputeCost{runtime::TaskKind::kForward, -1, batch, impl_->node, device},
             [this, worker, batch, device, t0] {
               auto& ex2 = impl_->executor;
               const auto t1 = ex2.now();
               worker->times.forward_ms = ms_between(t0, t1);
               ex2.compute([this, worker] { backward(*worker); },
                           runtime::ComputeCost{runtime::TaskKind::kBackward, -1, batch, impl_->node, device},
                           [this, worker, t1] {
                             worker->times.backward_ms = ms_between(t1, impl_->executor.now());
                             backward_ended(*worker);
                           });
             });
}

// A layer no hook reported (a parameter that took no part in this loss) is
// complete when the backward ends; its gradient counts as zero.
void LocalWorkers::backward_ended(Worker& worker) {
  Step& step = impl_->step;
  {
    std::lock_guard<std::mutex> lock(step.mutex);
    step.last_backward_end = std::max(step.last_backward_end, impl_->executor.now());
  }
  for (std::size_t l = 0; l < worker.produced.size(); ++l)
    if (!worker.produced[l]) worker_layer_ready(l);
  step_part_done();
}

void LocalWorkers::worker_layer_ready(std::size_t layer) {
  if (impl_->step.workers_ready[layer].fetch_add(1) + 1 == impl_->workers.size()) gather_layer(layer);
}

void LocalWorkers::gather_layer(std::size_t layer) {
  const double work = static_cast<double>(impl_->numels()[layer] * impl_->workers.size());
  impl_->executor.compute([this, layer] { sum_layer(layer); },
                          runtime::ComputeCost{runtime::TaskKind::kGather, static_cast<int>(layer), work, impl_->node, -1},
                          [this, layer] {
                            if (impl_->step.on_layer) impl_->step.on_layer(layer);
                            step_part_done();
                          });
}

void LocalWorkers::step_part_done() {
  Step& step = impl_->step;
  if (step.parts_left.fetch_sub(1) != 1) return;
  const double g = static_cast<double>(impl_->workers.size());
  LocalStepTimes sum;
  for (auto& worker : impl_->workers) {
    sum.forward_ms += worker->times.forward_ms / g;
    sum.backward_ms += worker->times.backward_ms / g;
    sum.loss += worker->times.loss / g;
    sum.device_forward_ms += worker->times.device_forward_ms / g;
    sum.device_backward_ms += worker->times.device_backward_ms / g;
    sum.worker_ms.push_back(worker->times.forward_ms + worker->times.backward_ms);
    sum.batch.push_back(worker->batch);
  }
  {
    std::lock_guard<std::mutex> lock(step.mutex);
    // What the per-layer sums add after the last backward: the part of the
    // gather that backward did not hide.
    sum.gather_ms = ms_between(step.last_backward_end, impl_->executor.now());
  }
  auto done = std::move(step.done);
  step.on_layer = nullptr;
  impl_->executor.post([done = std::move(done), sum] { done(sum); });
}

void LocalWorkers::forward(Worker& worker) {
  if (impl_->synthetic) return;  // timing mode: priced, not computed
  const auto indices = worker.stream.next(static_cast<std::size_t>(worker.batch));
  const auto batch = impl_->train.get_batch(Span<const std::size_t>(indices));
  const double forward_ms = worker.staging->run_compute([&] {
    worker.model->zero_grad();
    const auto logits = worker.model->forward(batch.images.to(worker.device, /*non_blocking=*/true));
    worker.loss = torch::nn::functional::cross_entropy(logits, batch.labels.to(worker.device, /*non_blocking=*/true));
  });
  if (worker.device.is_cuda()) worker.times.device_forward_ms = forward_ms;
  worker.times.loss = worker.loss.item<double>();
}

void LocalWorkers::backward(Worker& worker) {
  if (impl_->synthetic) {
    // As autograd would: the last layer's gradient first, each released at
    // its own point of the priced backward.
    for (std::size_t l = worker.produced.size(); l-- > 0;) {
      worker.produced[l] = 1;
      impl_->executor.post_progress(static_cast<int>(l), [this, l] { worker_layer_ready(l); });
    }
    return;
  }
  worker.staging->begin_backward();
  const double backward_ms = worker.staging->run_compute([&] { worker.loss.backward(); });
  if (worker.device.is_cuda()) worker.times.device_backward_ms = backward_ms;
  worker.loss = at::Tensor();  // frees the autograd graph
}

// Worker order: the sums are deterministic.
void LocalWorkers::sum_layer(std::size_t layer) {
  auto& out = (*impl_->step.out)[layer];
  const std::size_t n = impl_->numels()[layer];
  const auto even = static_cast<int>(impl_->config.batch_per_worker);
  if (impl_->synthetic) {
    // One draw per node, layer and step stands for the workers' sum.
    const uint64_t draw = ((impl_->steps * 1000003ULL + static_cast<uint64_t>(impl_->node)) << 20) ^ layer;
    out.resize(n);
    impl_->synthetic->fill(layer, draw ^ impl_->config.seed, static_cast<float>(impl_->workers.size()), out.data());
    return;
  }
  out.assign(n, 0.0f);
  for (auto& worker : impl_->workers) {
    // In place on the CPU; on a GPU after this layer's copy alone.
    const float* src = worker->staging->host(layer);
    if (!src) continue;
    float* dst = out.data();
    // A worker's loss is the mean over its own batch; its share of the
    // global mean is batch / batch_per_worker of an equal worker's.
    if (worker->batch == even) {
      for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
    } else {
      const float weight = static_cast<float>(worker->batch) / static_cast<float>(even);
      for (std::size_t i = 0; i < n; ++i) dst[i] += weight * src[i];
    }
  }
}

LocalWorkers::Accuracy LocalWorkers::evaluate(const std::vector<std::vector<float>>& parameters,
                                              const data::Dataset& test, std::size_t samples) {
  if (impl_->synthetic) throw std::logic_error("evaluate: a timing run (math: timing) has no accuracy to measure");
  const auto params = impl_->evaluator->parameters();
  device::copy_to_parameters(parameters, params);
  // BatchNorm statistics are per replica, not synchronized: take worker 0's.
  const auto from = impl_->workers.front()->model->named_buffers();
  const auto to = impl_->evaluator->named_buffers();
  {
    torch::NoGradGuard no_grad;
    for (std::size_t b = 0; b < from.size() && b < to.size(); ++b) to[b].tensor.copy_(from[b].tensor);
  }
  const auto e = model::evaluate(*impl_->evaluator, test, samples);
  return {e.accuracy, e.mean_loss, e.samples};
}

}  // namespace st::train
