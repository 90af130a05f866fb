#include "core/data/npz_dataset.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/npz.h"

namespace st::data {
namespace {

// mean / std from the file: one float per channel, std > 0.
std::vector<float> channel_values(const NpzArchive& archive, const char* field, int64_t channels, bool positive) {
  const NpyArray a = archive.read(field);
  auto fail = [&](const std::string& problem) { throw DatasetFileError(archive.file(), field, problem); };
  if (a.header.dtype.kind != 'f') fail(fmt::format("is {}; expected float32 or float64", a.header.dtype.name()));
  if (a.header.elements() != static_cast<uint64_t>(channels) || a.header.shape.size() > 1)
    fail(fmt::format("expected {} value(s), one per channel", channels));
  std::vector<float> values(static_cast<std::size_t>(channels));
  for (std::size_t c = 0; c < values.size(); ++c) {
    values[c] = static_cast<float>(a.value(c));
    if (!std::isfinite(values[c]) || (positive && values[c] <= 0))
      fail(fmt::format("channel {}: {} is not {}", c, values[c], positive ? "a positive number" : "finite"));
  }
  return values;
}

// Per-channel mean and (population) standard deviation of x_train, in the
// units the normalisation applies to (x / 255 for uint8). A constant
// channel gets std 1. Summed in double in index order: the same on every
// machine.
Normalization statistics_of(const NpyArray& x, const NpzDatasetInfo& g) {
  const auto channels = static_cast<std::size_t>(g.channels);
  const uint64_t plane = static_cast<uint64_t>(g.height * g.width);
  std::vector<double> sum(channels, 0.0), squares(channels, 0.0);
  const bool bytes = g.pixels.kind == 'u';
  const double unit = bytes ? 1.0 / 255.0 : 1.0;
  for (uint64_t n = 0; n < g.train; ++n) {
    for (std::size_t c = 0; c < channels; ++c) {
      const uint64_t base = (n * channels + c) * plane;
      double s = 0, q = 0;
      for (uint64_t p = 0; p < plane; ++p) {
        const double v = (bytes ? x.data[base + p] : x.value(base + p)) * unit;
        s += v;
        q += v * v;
      }
      sum[c] += s;
      squares[c] += q;
    }
  }
  Normalization out;
  const double count = static_cast<double>(g.train * plane);
  for (std::size_t c = 0; c < channels; ++c) {
    const double mean = sum[c] / count;
    const double variance = std::max(0.0, squares[c] / count - mean * mean);
    const double stddev = std::sqrt(variance);
    out.mean.push_back(static_cast<float>(mean));
    out.stddev.push_back(stddev > 1e-12 ? static_cast<float>(stddev) : 1.0f);
  }
  return out;
}

// An image dataset over one .npz array (uint8 or float32 pixels), int32
// labels. Batches are computed as value * scale + offset per channel, with
// the same float arithmetic as ImageDataset, so a converted file gives the
// same bits as the dataset it came from.
class ArrayImageDataset final : public Dataset {
 public:
  ArrayImageDataset(std::string name, ImageShape shape, int64_t classes, NpyArray pixels, std::vector<int32_t> labels,
                    const Normalization& normalization)
      : name_(std::move(name)), shape_(shape), classes_(classes), pixels_(std::move(pixels)), labels_(std::move(labels)) {
    const bool bytes = pixels_.header.dtype.kind == 'u';
    for (int64_t c = 0; c < shape_.channels; ++c) {
      const float stddev = normalization.stddev[static_cast<std::size_t>(c)];
      const float mean = normalization.mean[static_cast<std::size_t>(c)];
      scale_.push_back(bytes ? 1.0f / (255.0f * stddev) : 1.0f / stddev);
      offset_.push_back(-mean / stddev);
    }
  }
  std::string name() const override { return name_; }
  std::size_t size() const override { return labels_.size(); }
  ImageShape image_shape() const override { return shape_; }
  int64_t classes() const override { return classes_; }
  int64_t label(std::size_t index) const override {
    check_sample_index(*this, index);
    return labels_[index];
  }
  Batch get_batch(Span<const std::size_t> indices) const override {
    const auto count = static_cast<int64_t>(indices.size());
    auto images = torch::empty({count, shape_.channels, shape_.height, shape_.width}, torch::kFloat32);
    auto labels = torch::empty({count}, torch::kInt64);
    float* out = images.data_ptr<float>();
    int64_t* out_labels = labels.data_ptr<int64_t>();
    const auto plane = static_cast<std::size_t>(shape_.height * shape_.width);
    const auto per_sample = static_cast<std::size_t>(shape_.pixels());
    const bool bytes = pixels_.header.dtype.kind == 'u';
    for (std::size_t b = 0; b < indices.size(); ++b) {
      check_sample_index(*this, indices[b]);
      const std::size_t base = indices[b] * per_sample;
      for (int64_t c = 0; c < shape_.channels; ++c) {
        const std::size_t first = base + static_cast<std::size_t>(c) * plane;
        const float scale = scale_[static_cast<std::size_t>(c)], offset = offset_[static_cast<std::size_t>(c)];
        if (bytes) {
          const uint8_t* in = pixels_.data.data() + first;
          for (std::size_t p = 0; p < plane; ++p) *out++ = in[p] * scale + offset;
        } else {
          const uint8_t* in = pixels_.data.data() + first * sizeof(float);
          for (std::size_t p = 0; p < plane; ++p) {
            float v;
            std::memcpy(&v, in + p * sizeof(float), sizeof(float));
            *out++ = v * scale + offset;
          }
        }
      }
      out_labels[b] = labels_[indices[b]];
    }
    return {images, labels};
  }

 private:
  std::string name_;
  ImageShape shape_;
  int64_t classes_;
  NpyArray pixels_;
  std::vector<int32_t> labels_;
  std::vector<float> scale_, offset_;
};

void require_finite(const NpzArchive& archive, const char* field, const NpyArray& x, uint64_t per_sample) {
  if (x.header.dtype.kind != 'f') return;
  const uint64_t total = x.header.elements();
  for (uint64_t i = 0; i < total; ++i) {
    float v;
    std::memcpy(&v, x.data.data() + i * sizeof(float), sizeof(float));
    if (!std::isfinite(v))
      throw DatasetFileError(archive.file(), fmt::format("{}[{}]", field, i / per_sample),
                             fmt::format("pixel {} is {}", i % per_sample, v));
  }
}

}  // namespace

NpzDatasets load_npz_datasets(const std::string& path) {
  CheckedNpzDataset file = check_npz_dataset(NpzArchive::open(path));
  const NpzDatasetInfo& info = file.info;
  const ImageShape shape{info.channels, info.height, info.width};
  const uint64_t per_sample = static_cast<uint64_t>(shape.pixels());
  NpyArray x_train = file.archive.read(kNpzTrain.x);
  require_finite(file.archive, kNpzTrain.x, x_train, per_sample);
  Normalization normalization;
  if (file.archive.has("mean") || file.archive.has("std")) {
    if (!file.archive.has("mean") || !file.archive.has("std"))
      throw DatasetFileError(path, file.archive.has("mean") ? "std" : "mean", "missing: mean and std come together");
    normalization.mean = channel_values(file.archive, "mean", info.channels, false);
    normalization.stddev = channel_values(file.archive, "std", info.channels, true);
  } else {
    normalization = statistics_of(x_train, info);
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  auto make = [&](const NpzSplitNames& split, NpyArray x, std::vector<int32_t> labels) {
    if (split.x != kNpzTrain.x) require_finite(file.archive, split.x, x, per_sample);  // x_train: checked above
    return std::make_unique<ArrayImageDataset>(fmt::format("npz:{}/{}", stem, split.label), shape, info.classes,
                                               std::move(x), std::move(labels), normalization);
  };
  NpzDatasets out;
  out.test = make(kNpzTest, file.archive.read(kNpzTest.x), std::move(file.test_labels));
  if (info.validation > 0)
    out.validation = make(kNpzValidation, file.archive.read(kNpzValidation.x), std::move(file.validation_labels));
  out.train = make(kNpzTrain, std::move(x_train), std::move(file.train_labels));
  return out;
}

namespace {

NpzEntry images_entry(const char* name, const ImageDataset& d) {
  const ImageShape s = d.image_shape();
  std::vector<uint8_t> pixels;
  pixels.reserve(d.size() * static_cast<std::size_t>(s.pixels()));
  for (std::size_t i = 0; i < d.size(); ++i) {
    const auto raw = d.raw_pixels(i);
    pixels.insert(pixels.end(), raw.data(), raw.data() + raw.size());
  }
  const std::vector<int64_t> shape{static_cast<int64_t>(d.size()), s.channels, s.height, s.width};
  return {name, npy_bytes(NpyDtype{'u', 1}, shape, pixels.data())};
}

NpzEntry labels_entry(const char* name, const Dataset& d) {
  const std::vector<int64_t> shape{static_cast<int64_t>(d.size())};
  if (d.classes() <= 256) {
    std::vector<uint8_t> labels(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) labels[i] = static_cast<uint8_t>(d.label(i));
    return {name, npy_bytes(NpyDtype{'u', 1}, shape, labels.data())};
  }
  std::vector<int32_t> labels(d.size());
  for (std::size_t i = 0; i < d.size(); ++i) labels[i] = static_cast<int32_t>(d.label(i));
  return {name, npy_bytes(NpyDtype{'i', 4}, shape, labels.data())};
}

}  // namespace

void write_npz_dataset(const std::string& path, const ImageDataset& train, const ImageDataset& test) {
  const Normalization& n = train.normalization();
  const std::vector<int64_t> per_channel{static_cast<int64_t>(n.mean.size())};
  const int32_t classes = static_cast<int32_t>(train.classes());
  write_npz(path, {images_entry(kNpzTrain.x, train), labels_entry(kNpzTrain.y, train), images_entry(kNpzTest.x, test),
                   labels_entry(kNpzTest.y, test), {"classes", npy_bytes(NpyDtype{'i', 4}, {}, &classes)},
                   {"mean", npy_bytes(NpyDtype{'f', 4}, per_channel, n.mean.data())},
                   {"std", npy_bytes(NpyDtype{'f', 4}, per_channel, n.stddev.data())}});
}

}  // namespace st::data
