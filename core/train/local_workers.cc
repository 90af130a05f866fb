#include "core/train/local_workers.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/train/versioned_parameters.h"

namespace st::train {
namespace {

double ms_between(runtime::Nanos a, runtime::Nanos b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

model::ModelShape shape_of(const data::Dataset& d) {
  const auto s = d.image_shape();
  return {s.channels, s.height, s.width, d.classes()};
}

void copy_into(const at::Tensor& param, const float* data, std::size_t n) {
  torch::NoGradGuard no_grad;
  param.copy_(torch::from_blob(const_cast<float*>(data), {static_cast<int64_t>(n)}, torch::kFloat).view_as(param));
}

}  // namespace

struct Worker {
  model::Model model;
  data::BatchStream stream;
  LocalStepTimes times;
  at::Tensor loss;  // between forward and backward
  int batch = 0;
};

struct LocalWorkers::Impl {
  const TrainConfig config;
  const data::Dataset& train;
  runtime::Executor& executor;
  int node = 0;
  std::vector<std::unique_ptr<Worker>> workers;
  std::unique_ptr<model::Model> evaluator;
};

LocalWorkers::LocalWorkers(const TrainConfig& config, int node, const data::Dataset& train,
                           runtime::Executor& executor)
    : impl_(new Impl{config, train, executor, node, {}, {}}) {
  const int world = config.nodes * config.gpus_per_node;
  for (int w = 0; w < config.gpus_per_node; ++w) {
    const int global = node * config.gpus_per_node + w;
    data::ShardSampler sampler(train.size(), world, global, config.seed);
    // Same init seed everywhere: every replica starts from identical weights.
    impl_->workers.push_back(std::make_unique<Worker>(
        Worker{model::make_model(config.model, shape_of(train), config.seed), data::BatchStream(sampler), {}, {},
               static_cast<int>(config.batch_per_worker)}));
  }
  impl_->evaluator = std::make_unique<model::Model>(model::make_model(config.model, shape_of(train), config.seed));
}

LocalWorkers::~LocalWorkers() = default;

std::size_t LocalWorkers::layers() const { return impl_->workers.front()->model.parameters().size(); }

std::vector<std::size_t> LocalWorkers::layer_numels() const {
  std::vector<std::size_t> out;
  for (const auto& p : impl_->workers.front()->model.parameters()) out.push_back(static_cast<std::size_t>(p.numel()));
  return out;
}

std::vector<std::string> LocalWorkers::layer_names() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->workers.front()->model.named_parameters()) out.push_back(p.name);
  return out;
}

std::vector<std::vector<float>> LocalWorkers::initial_parameters() const {
  std::vector<std::vector<float>> out;
  for (const auto& p : impl_->workers.front()->model.parameters()) {
    const auto c = p.detach().contiguous();
    out.emplace_back(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}

void LocalWorkers::load(VersionedParameters& master, int target, std::vector<std::vector<float>>& staged) {
  staged.resize(master.layers());
  for (std::size_t l = 0; l < master.layers(); ++l) {
    staged[l].resize(master.numel(l));
    master.read_layer(l, target, staged[l].data());
  }
  for (auto& worker : impl_->workers) {
    const auto params = worker->model.parameters();
    for (std::size_t l = 0; l < params.size(); ++l) copy_into(params[l], staged[l].data(), staged[l].size());
  }
}

void LocalWorkers::set_batches(const std::vector<int>& batch) {
  if (batch.size() != impl_->workers.size())
    throw std::invalid_argument(fmt::format("set_batches: {} batches for {} workers", batch.size(), impl_->workers.size()));
  for (int b : batch)
    if (b < 1) throw std::invalid_argument(fmt::format("set_batches: batch {} is below 1", b));
  for (std::size_t w = 0; w < batch.size(); ++w) impl_->workers[w]->batch = batch[w];
}

// Forward, backward and the gather are separate compute tasks so that every
// executor charges them separately: the simulated one prices each by its
// compute-time model (forward/backward on the worker's GPU, the gather on
// the node's CPU), and the times below are executor durations either way.
void LocalWorkers::compute_gradients(std::vector<std::vector<float>>& out,
                                     std::function<void(const LocalStepTimes&)> done) {
  auto& ex = impl_->executor;
  const std::size_t g = impl_->workers.size();
  auto remaining = std::make_shared<std::atomic<std::size_t>>(g);
  auto gather = [this, &out, done = std::move(done), g] {
    auto& executor = impl_->executor;
    const auto start = executor.now();
    const auto numels = layer_numels();
    std::size_t total = 0;
    for (auto n : numels) total += n;
    executor.compute([this, &out, numels] { sum_gradients(out, numels); },
                     runtime::ComputeCost{"gather", -1, static_cast<double>(total * g), impl_->node, -1},
                     [this, start, g, done] {
                       LocalStepTimes sum;
                       for (auto& worker : impl_->workers) {
                         sum.forward_ms += worker->times.forward_ms / g;
                         sum.backward_ms += worker->times.backward_ms / g;
                         sum.loss += worker->times.loss / g;
                         sum.worker_ms.push_back(worker->times.forward_ms + worker->times.backward_ms);
                         sum.batch.push_back(worker->batch);
                       }
                       sum.gather_ms = ms_between(start, impl_->executor.now());
                       done(sum);
                     });
  };
  for (std::size_t w = 0; w < g; ++w) {
    Worker* worker = impl_->workers[w].get();
    const double batch = static_cast<double>(worker->batch);
    const int device = static_cast<int>(w);
    const auto t0 = ex.now();
    ex.compute([this, worker] { forward(*worker); }, runtime::ComputeCost{"forward", -1, batch, impl_->node, device},
               [this, worker, remaining, gather, batch, device, t0] {
                 auto& ex2 = impl_->executor;
                 const auto t1 = ex2.now();
                 worker->times.forward_ms = ms_between(t0, t1);
                 ex2.compute([worker] { backward(*worker); },
                             runtime::ComputeCost{"backward", -1, batch, impl_->node, device},
                             [this, worker, remaining, gather, t1] {
                               worker->times.backward_ms = ms_between(t1, impl_->executor.now());
                               if (remaining->fetch_sub(1) == 1) gather();
                             });
               });
  }
}

void LocalWorkers::forward(Worker& worker) {
  const auto indices = worker.stream.next(static_cast<std::size_t>(worker.batch));
  const auto batch = impl_->train.get_batch(Span<const std::size_t>(indices));
  worker.model.zero_grad();
  const auto logits = worker.model.forward(batch.images);
  worker.loss = torch::nn::functional::cross_entropy(logits, batch.labels);
  worker.times.loss = worker.loss.item<double>();
}

void LocalWorkers::backward(Worker& worker) {
  worker.loss.backward();
  worker.loss = at::Tensor();  // frees the autograd graph
}

// Worker order: the sums are deterministic.
void LocalWorkers::sum_gradients(std::vector<std::vector<float>>& out, const std::vector<std::size_t>& numels) {
  out.resize(numels.size());
  for (std::size_t l = 0; l < numels.size(); ++l) {
    out[l].assign(numels[l], 0.0f);
    for (auto& worker : impl_->workers) {
      const auto grad = worker->model.parameters()[l].grad();
      if (!grad.defined()) continue;
      const float* src = grad.data_ptr<float>();
      float* dst = out[l].data();
      // A worker's loss is the mean over its own batch; its share of the
      // global mean is batch / batch_per_worker of an equal worker's.
      const auto even = static_cast<int>(impl_->config.batch_per_worker);
      if (worker->batch == even) {
        for (std::size_t i = 0; i < numels[l]; ++i) dst[i] += src[i];
      } else {
        const float weight = static_cast<float>(worker->batch) / static_cast<float>(even);
        for (std::size_t i = 0; i < numels[l]; ++i) dst[i] += weight * src[i];
      }
    }
  }
}

LocalWorkers::Accuracy LocalWorkers::evaluate(const std::vector<std::vector<float>>& parameters,
                                              const data::Dataset& test, std::size_t samples) {
  const auto params = impl_->evaluator->parameters();
  for (std::size_t l = 0; l < params.size(); ++l) copy_into(params[l], parameters[l].data(), parameters[l].size());
  // BatchNorm statistics are per replica, not synchronized: take worker 0's.
  const auto from = impl_->workers.front()->model.named_buffers();
  const auto to = impl_->evaluator->named_buffers();
  {
    torch::NoGradGuard no_grad;
    for (std::size_t b = 0; b < from.size() && b < to.size(); ++b) to[b].tensor.copy_(from[b].tensor);
  }
  const auto e = model::evaluate(*impl_->evaluator, test, samples);
  return {e.accuracy, e.mean_loss, e.samples};
}

}  // namespace st::train
