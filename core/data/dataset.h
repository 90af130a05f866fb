#pragma once
// Datasets for training and evaluation: an abstract Dataset that hands out
// normalized float batches by index, so samplers, shards and the training
// loop never care where the images come from (Fashion-MNIST, CIFAR-10,
// synthetic). Only <ATen/core/Tensor.h> is included (about 2 s per TU).
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/util/span.h"

namespace st::data {

enum class Split { kTrain, kTest };
const char* split_name(Split split);  // "train" / "test"

struct ImageShape {
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t pixels() const { return channels * height * width; }
};

// images: float32 [batch, channels, height, width], normalized per channel.
// labels: int64 [batch], in 0..classes-1.
struct Batch {
  at::Tensor images;
  at::Tensor labels;
};

// Implementations keep no mutable state: get_batch may be called from several
// threads at once (e.g. one per simulated rank).
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string name() const = 0;  // e.g. "fashion-mnist/train"
  virtual std::size_t size() const = 0;
  virtual ImageShape image_shape() const = 0;
  virtual int64_t classes() const = 0;
  virtual int64_t label(std::size_t index) const = 0;
  // Gathers the samples at `indices` (any order, repeats allowed). Throws
  // std::out_of_range naming the dataset and index when one is >= size().
  virtual Batch get_batch(Span<const std::size_t> indices) const = 0;

  // Convenience for evaluation: samples [begin, begin + count).
  Batch get_range(std::size_t begin, std::size_t count) const;
};

// Per-channel normalization (x / 255 - mean) / stddev applied to 8-bit pixels.
struct Normalization {
  std::vector<float> mean;    // one per channel
  std::vector<float> stddev;  // one per channel
};

// A dataset of 8-bit images held in memory (Fashion-MNIST, CIFAR-10).
// Pixels are stored as loaded (CHW per sample) and converted per batch, which
// keeps the resident set at 1 byte per pixel.
class ImageDataset final : public Dataset {
 public:
  ImageDataset(std::string name, ImageShape shape, int64_t classes,
               std::vector<uint8_t> pixels, std::vector<uint8_t> labels,
               Normalization normalization);

  std::string name() const override { return name_; }
  std::size_t size() const override { return labels_.size(); }
  ImageShape image_shape() const override { return shape_; }
  int64_t classes() const override { return classes_; }
  int64_t label(std::size_t index) const override;
  Batch get_batch(Span<const std::size_t> indices) const override;

  // Raw 8-bit pixels of one sample (channels * height * width bytes).
  Span<const uint8_t> raw_pixels(std::size_t index) const;
  const Normalization& normalization() const { return normalization_; }

 private:
  void check_index(std::size_t index) const;

  std::string name_;
  ImageShape shape_;
  int64_t classes_;
  std::vector<uint8_t> pixels_;
  std::vector<uint8_t> labels_;
  Normalization normalization_;
};

// Throws std::out_of_range naming the dataset when index >= dataset.size().
void check_sample_index(const Dataset& dataset, std::size_t index);

// Some samples of another dataset, by index (shared: several views may
// read one loaded dataset).
class SubsetDataset final : public Dataset {
 public:
  SubsetDataset(std::shared_ptr<const Dataset> base, std::vector<std::size_t> indices, std::string name);
  std::string name() const override { return name_; }
  std::size_t size() const override { return indices_.size(); }
  ImageShape image_shape() const override { return base_->image_shape(); }
  int64_t classes() const override { return base_->classes(); }
  int64_t label(std::size_t index) const override;
  Batch get_batch(Span<const std::size_t> indices) const override;

 private:
  std::shared_ptr<const Dataset> base_;
  std::vector<std::size_t> indices_;
  std::string name_;
};

// The training set split for tuning that never sees the test set: a tenth
// of its samples, chosen by a fixed permutation (the same for every run and
// seed), is the validation set; training uses the rest.
struct TrainAndValidation {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> validation;
};
TrainAndValidation carve_validation(std::unique_ptr<Dataset> train);

}  // namespace st::data
