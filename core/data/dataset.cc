#include "core/data/dataset.h"

#include <algorithm>

#include "core/data/random.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace st::data {

const char* split_name(Split split) { return split == Split::kTrain ? "train" : "test"; }

Batch Dataset::get_range(std::size_t begin, std::size_t count) const {
  std::vector<std::size_t> indices(count);
  for (std::size_t i = 0; i < count; ++i) indices[i] = begin + i;
  return get_batch(indices);
}

void check_sample_index(const Dataset& dataset, std::size_t index) {
  if (index >= dataset.size()) {
    throw std::out_of_range(fmt::format("{}: sample index {} out of range (size {})",
                                        dataset.name(), index, dataset.size()));
  }
}

ImageDataset::ImageDataset(std::string name, ImageShape shape, int64_t classes,
                           std::vector<uint8_t> pixels, std::vector<uint8_t> labels,
                           Normalization normalization)
    : name_(std::move(name)),
      shape_(shape),
      classes_(classes),
      pixels_(std::move(pixels)),
      labels_(std::move(labels)),
      normalization_(std::move(normalization)) {
  const auto channels = static_cast<std::size_t>(shape_.channels);
  if (normalization_.mean.size() != channels || normalization_.stddev.size() != channels) {
    throw std::invalid_argument(fmt::format("{}: normalization needs {} means and stddevs",
                                            name_, channels));
  }
  if (pixels_.size() != labels_.size() * static_cast<std::size_t>(shape_.pixels())) {
    throw std::invalid_argument(fmt::format("{}: {} pixel bytes do not match {} labels of {} pixels",
                                            name_, pixels_.size(), labels_.size(), shape_.pixels()));
  }
}

void ImageDataset::check_index(std::size_t index) const { check_sample_index(*this, index); }

int64_t ImageDataset::label(std::size_t index) const {
  check_index(index);
  return labels_[index];
}

Span<const uint8_t> ImageDataset::raw_pixels(std::size_t index) const {
  check_index(index);
  const auto per_sample = static_cast<std::size_t>(shape_.pixels());
  return Span<const uint8_t>(pixels_.data() + index * per_sample, per_sample);
}

Batch ImageDataset::get_batch(Span<const std::size_t> indices) const {
  const auto count = static_cast<int64_t>(indices.size());
  auto images = torch::empty({count, shape_.channels, shape_.height, shape_.width}, torch::kFloat32);
  auto labels = torch::empty({count}, torch::kInt64);
  float* out = images.data_ptr<float>();
  int64_t* out_labels = labels.data_ptr<int64_t>();
  const auto plane = static_cast<std::size_t>(shape_.height * shape_.width);

  // Precompute per channel: value = byte * scale + offset.
  std::vector<float> scale(shape_.channels), offset(shape_.channels);
  for (int64_t c = 0; c < shape_.channels; ++c) {
    scale[c] = 1.0f / (255.0f * normalization_.stddev[c]);
    offset[c] = -normalization_.mean[c] / normalization_.stddev[c];
  }
  for (std::size_t b = 0; b < indices.size(); ++b) {
    const Span<const uint8_t> source = raw_pixels(indices[b]);
    for (int64_t c = 0; c < shape_.channels; ++c) {
      const uint8_t* in = source.data() + c * plane;
      for (std::size_t p = 0; p < plane; ++p) *out++ = in[p] * scale[c] + offset[c];
    }
    out_labels[b] = labels_[indices[b]];
  }
  return {images, labels};
}

}  // namespace st::data

namespace st::data {

SubsetDataset::SubsetDataset(std::shared_ptr<const Dataset> base, std::vector<std::size_t> indices, std::string name)
    : base_(std::move(base)), indices_(std::move(indices)), name_(std::move(name)) {
  for (const std::size_t i : indices_) check_sample_index(*base_, i);
}

int64_t SubsetDataset::label(std::size_t index) const {
  check_sample_index(*this, index);
  return base_->label(indices_[index]);
}

Batch SubsetDataset::get_batch(Span<const std::size_t> indices) const {
  std::vector<std::size_t> mapped;
  mapped.reserve(indices.size());
  for (const std::size_t i : indices) {
    check_sample_index(*this, i);
    mapped.push_back(indices_[i]);
  }
  return base_->get_batch(Span<const std::size_t>(mapped));
}

TrainAndValidation carve_validation(std::unique_ptr<Dataset> train) {
  std::shared_ptr<const Dataset> all(std::move(train));
  std::vector<std::size_t> order(all->size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // A fixed stream, apart from every run's seed: the same split always.
  SplitMix64 rng(mix64(0x76616c6964ull /* "valid" */));
  portable_shuffle(order, rng);
  const std::size_t held_out = std::max<std::size_t>(1, order.size() / 10);
  std::vector<std::size_t> validation(order.end() - static_cast<std::ptrdiff_t>(held_out), order.end());
  order.resize(order.size() - held_out);
  // In index order, so a shard reads its samples as the sampler orders them.
  std::sort(order.begin(), order.end());
  std::sort(validation.begin(), validation.end());
  const std::string base = all->name();
  TrainAndValidation out;
  out.train = std::make_unique<SubsetDataset>(all, std::move(order), base + " (training part)");
  out.validation = std::make_unique<SubsetDataset>(all, std::move(validation), base + " (validation part)");
  return out;
}

}  // namespace st::data
