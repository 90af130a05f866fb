#include "core/train/run/training_data.h"

#include "core/data/cifar10.h"
#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/npz_dataset.h"
#include "core/data/synthetic.h"
#include "core/train/config.h"

namespace st::train {
namespace {

std::unique_ptr<data::Dataset> load_builtin(const TrainConfig& c, data::Split split) {
  if (c.dataset == "fashion-mnist") {
    if (c.data_dir.empty()) return data::load_fashion_mnist(split);
    return data::load_fashion_mnist(split, c.data_dir);
  }
  if (c.dataset == "cifar10") {
    if (c.data_dir.empty()) return data::load_cifar10(split);
    return data::load_cifar10(split, c.data_dir);
  }
  data::SyntheticOptions options;
  options.seed = c.seed;
  options.channels = c.synthetic_channels;
  options.height = c.synthetic_height;
  options.width = c.synthetic_width;
  options.classes = c.synthetic_classes;
  return data::make_synthetic_dataset(options, split);
}

bool evaluates_on_validation(const TrainConfig& c) { return c.evaluate_on == "validation"; }

}  // namespace

TrainingData load_training_data(const TrainConfig& config) {
  TrainingData out;
  if (config.dataset == "npz") {
    data::NpzDatasets file = data::load_npz_datasets(config.data_file);
    if (file.validation) {
      out.train = std::move(file.train);
      out.evaluation = evaluates_on_validation(config) ? std::move(file.validation) : std::move(file.test);
      return out;
    }
    auto parts = data::carve_validation(std::move(file.train));
    out.train = std::move(parts.train);
    out.evaluation = evaluates_on_validation(config) ? std::move(parts.validation) : std::move(file.test);
    return out;
  }
  auto parts = data::carve_validation(load_builtin(config, data::Split::kTrain));
  out.train = std::move(parts.train);
  out.evaluation =
      evaluates_on_validation(config) ? std::move(parts.validation) : load_builtin(config, data::Split::kTest);
  return out;
}

DataShape dataset_shape(const TrainConfig& c) {
  if (c.dataset == "cifar10") return {3, 32, 32, 10};
  if (c.dataset == "synthetic") return {c.synthetic_channels, c.synthetic_height, c.synthetic_width, c.synthetic_classes};
  if (c.dataset == "npz") {
    const data::NpzDatasetInfo file = data::describe_npz_dataset(c.data_file);
    return {file.channels, file.height, file.width, file.classes};
  }
  return {1, 28, 28, 10};  // fashion-mnist
}

}  // namespace st::train
