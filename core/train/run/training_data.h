#pragma once
// The datasets a run reads, from TrainConfig::dataset: what it trains on
// and what it is evaluated on (the test set, or the validation split for
// tuning: TrainConfig::evaluate_on). Training never sees the validation
// split: a dataset file's own x_val (core/data/npz_dataset.h), else a
// fixed tenth of the training set (data::carve_validation).
#include <cstdint>
#include <memory>

namespace st::data {
class Dataset;
}

namespace st::train {

struct TrainConfig;

struct TrainingData {
  std::unique_ptr<data::Dataset> train;
  std::unique_ptr<data::Dataset> evaluation;
};

TrainingData load_training_data(const TrainConfig& config);

// What the dataset's images and classes are, without reading its pixels:
// the shape a model is built for.
struct DataShape {
  int64_t channels = 1, height = 28, width = 28, classes = 10;
};
DataShape dataset_shape(const TrainConfig& config);

}  // namespace st::train
