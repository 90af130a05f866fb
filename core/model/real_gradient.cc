#include "core/model/real_gradient.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/data/synthetic.h"
#include "core/model/local_training.h"
#include "core/model/model.h"

namespace st::model {
namespace {

// Benchmarks often ask for several gradients; parsing the 47 MB training set
// once per process instead of once per call saves about half a second each.
std::shared_ptr<const data::Dataset> cached_fashion_mnist_train(const std::string& dir) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const data::Dataset>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& entry = cache[dir];
  if (!entry) entry = data::load_fashion_mnist(data::Split::kTrain, dir);
  return entry;
}

struct TrainingData {
  std::shared_ptr<const data::Dataset> dataset;
  std::string source;
};

TrainingData choose_training_data(const RealGradientOptions& options) {
  const std::string dir = options.data_dir.empty() ? data::default_fashion_mnist_dir() : options.data_dir;
  if (options.synthetic_fallback && !data::fashion_mnist_available(dir)) {
    data::SyntheticOptions synthetic;
    synthetic.seed = options.seed;
    return {data::make_synthetic_dataset(synthetic, data::Split::kTrain), "synthetic"};
  }
  return {cached_fashion_mnist_train(dir), "fashion-mnist"};
}

void validate(const RealGradientOptions& options) {
  if (options.train_steps < 0) {
    throw std::invalid_argument(fmt::format("real_gradient: train_steps {} is negative", options.train_steps));
  }
  if (options.batch < 1) {
    throw std::invalid_argument(fmt::format("real_gradient: batch {} must be at least 1", options.batch));
  }
}

std::vector<GradientTensor> describe_tensors(const Model& model) {
  std::vector<GradientTensor> tensors;
  std::size_t offset = 0;
  for (const NamedTensor& parameter : model.named_parameters()) {
    const auto numel = static_cast<std::size_t>(parameter.tensor.numel());
    const auto sizes = parameter.tensor.sizes();
    tensors.push_back({parameter.name, std::vector<int64_t>(sizes.begin(), sizes.end()), offset, numel});
    offset += numel;
  }
  return tensors;
}

}  // namespace

RealGradient compute_real_gradient(const RealGradientOptions& options) {
  validate(options);
  ThreadCountGuard threads(options.threads);
  const TrainingData data = choose_training_data(options);
  const data::ImageShape image = data.dataset->image_shape();
  const Model model = make_model(options.model, {image.channels, image.height, image.width, data.dataset->classes()},
                                 options.seed);

  data::BatchStream stream(data::ShardSampler(data.dataset->size(), 1, 0, options.seed));
  const auto batch = static_cast<std::size_t>(options.batch);
  SgdTrainer trainer(model, SgdSettings{0.01, 0.9, 0.0});
  trainer.train(*data.dataset, stream, options.train_steps, batch);

  model.zero_grad();
  loss_and_backward(model, data.dataset->get_batch(stream.next(batch)));
  return {options.model, data.source, flatten_gradients(model), describe_tensors(model)};
}

std::vector<float> real_gradient(const std::string& model, int train_steps, uint64_t seed, int batch) {
  RealGradientOptions options;
  options.model = model;
  options.train_steps = train_steps;
  options.seed = seed;
  options.batch = batch;
  return compute_real_gradient(options).values;
}

}  // namespace st::model
