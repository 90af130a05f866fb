#include "core/model/local_training.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/data/sampler.h"

namespace st::model {

double loss_and_backward(const Model& model, const data::Batch& batch) {
  auto loss = torch::nn::functional::cross_entropy(model.forward(batch.images), batch.labels);
  loss.backward();
  return loss.item<double>();
}

std::vector<float> flatten_gradients(const Model& model) {
  std::vector<float> flat;
  flat.reserve(static_cast<std::size_t>(model.parameter_count()));
  for (const at::Tensor& parameter : model.parameters()) {
    const at::Tensor grad = parameter.grad().defined()
                                ? parameter.grad().detach().to(torch::kCPU, torch::kFloat32).contiguous()
                                : torch::zeros({parameter.numel()}, torch::kFloat32);
    const float* values = grad.data_ptr<float>();
    flat.insert(flat.end(), values, values + grad.numel());
  }
  return flat;
}

struct SgdTrainer::State {
  Model model;
  torch::optim::SGD optimizer;
};

namespace {
torch::optim::SGDOptions to_torch(const SgdSettings& settings) {
  return torch::optim::SGDOptions(settings.lr).momentum(settings.momentum).weight_decay(settings.weight_decay);
}
}  // namespace

SgdTrainer::SgdTrainer(Model model, const SgdSettings& settings)
    : state_(new State{model, torch::optim::SGD(model.parameters(), to_torch(settings))}) {}

SgdTrainer::~SgdTrainer() = default;

double SgdTrainer::step(const data::Batch& batch) {
  state_->optimizer.zero_grad();
  const double loss = loss_and_backward(state_->model, batch);
  state_->optimizer.step();
  return loss;
}

double SgdTrainer::train(const data::Dataset& dataset, data::BatchStream& stream, int steps,
                         std::size_t batch_size) {
  if (steps <= 0) return 0.0;
  double loss_sum = 0.0;
  for (int i = 0; i < steps; ++i) loss_sum += step(dataset.get_batch(stream.next(batch_size)));
  return loss_sum / steps;
}

Evaluation evaluate(const Model& model, const data::Dataset& dataset, std::size_t max_samples,
                    std::size_t batch_size) {
  if (batch_size == 0) throw std::invalid_argument("evaluate: batch size must be positive");
  const std::size_t total = max_samples == 0 ? dataset.size() : std::min(max_samples, dataset.size());
  const bool was_training = model.is_training();
  model.set_training(false);
  torch::NoGradGuard no_grad;
  // The model may live on a GPU; batches are read into host memory.
  const auto parameters = model.parameters();
  const torch::Device device = parameters.empty() ? torch::Device(torch::kCPU) : parameters.front().device();
  std::size_t correct = 0;
  double loss_sum = 0.0;
  for (std::size_t begin = 0; begin < total; begin += batch_size) {
    const std::size_t count = std::min(batch_size, total - begin);
    const data::Batch batch = dataset.get_range(begin, count);
    const auto labels = batch.labels.to(device);
    const auto logits = model.forward(batch.images.to(device));
    loss_sum += torch::nn::functional::cross_entropy(
                    logits, labels,
                    torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                    .item<double>();
    correct += static_cast<std::size_t>(logits.argmax(1).eq(labels).sum().item<int64_t>());
  }
  model.set_training(was_training);
  if (total == 0) return {};
  return {static_cast<double>(correct) / total, loss_sum / total, total};
}

ThreadCountGuard::ThreadCountGuard(int threads) : previous_(at::get_num_threads()) {
  if (threads < 1) throw std::invalid_argument(fmt::format("thread count {} must be at least 1", threads));
  at::set_num_threads(threads);
}

ThreadCountGuard::~ThreadCountGuard() { at::set_num_threads(previous_); }

}  // namespace st::model
