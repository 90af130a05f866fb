#include "core/data/synthetic.h"

#include <torch/torch.h>

#include <fmt/format.h>

#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/data/random.h"

namespace st::data {
namespace {

// Stream tags keep prototypes, train samples and test samples independent.
constexpr uint64_t kPrototypeStream = 0x70726f746f;  // "proto"
constexpr uint64_t kTrainStream = 0x747261696e;      // "train"
constexpr uint64_t kTestStream = 0x74657374;         // "test"

class SyntheticDataset final : public Dataset {
 public:
  SyntheticDataset(const SyntheticOptions& options, Split split)
      : options_(options),
        split_(split),
        size_(split == Split::kTrain ? options.train_size : options.test_size),
        sample_stream_(mix64(options.seed, split == Split::kTrain ? kTrainStream : kTestStream)),
        prototypes_(new float[static_cast<std::size_t>(options.classes * pixels())]),
        prototype_made_(static_cast<std::size_t>(options.classes)) {}

  std::string name() const override {
    return fmt::format("synthetic-seed{}/{}", options_.seed, split_name(split_));
  }
  std::size_t size() const override { return size_; }
  ImageShape image_shape() const override {
    return {options_.channels, options_.height, options_.width};
  }
  int64_t classes() const override { return options_.classes; }

  int64_t label(std::size_t index) const override {
    check_sample_index(*this, index);
    SplitMix64 rng = sample_rng(index);
    return draw_label(rng);
  }

  Batch get_batch(Span<const std::size_t> indices) const override {
    const auto count = static_cast<int64_t>(indices.size());
    auto images = torch::empty({count, options_.channels, options_.height, options_.width});
    auto labels = torch::empty({count}, torch::kInt64);
    float* out = images.data_ptr<float>();
    int64_t* out_labels = labels.data_ptr<int64_t>();
    for (int64_t b = 0; b < count; ++b) {
      check_sample_index(*this, indices[b]);
      SplitMix64 rng = sample_rng(indices[b]);
      const int64_t cls = draw_label(rng);
      out_labels[b] = cls;
      const float* prototype = prototype_of(cls);
      for (int64_t p = 0; p < pixels(); ++p) {
        *out++ = prototype[p] + options_.noise * static_cast<float>(rng.normal());
      }
    }
    return {images, labels};
  }

 private:
  int64_t pixels() const { return options_.channels * options_.height * options_.width; }
  SplitMix64 sample_rng(std::size_t index) const { return SplitMix64(mix64(sample_stream_, index)); }
  int64_t draw_label(SplitMix64& rng) const {
    return static_cast<int64_t>(rng.below(static_cast<uint64_t>(options_.classes)));
  }

  // Class prototypes are one stream, class after class, each made the first
  // time a sample of its class is asked for (entering the stream at its
  // class's position): an ImageNet-shaped set of 100 classes is 15M normal
  // draws, seconds that a run reading a few samples need not pay.
  const float* prototype_of(int64_t cls) const {
    float* prototype = &prototypes_[static_cast<std::size_t>(cls * pixels())];
    std::call_once(prototype_made_[static_cast<std::size_t>(cls)], [&] {
      SplitMix64 rng(mix64(options_.seed, kPrototypeStream));
      rng.discard(static_cast<uint64_t>(cls * pixels()) * SplitMix64::kDrawsPerNormal);
      for (int64_t p = 0; p < pixels(); ++p) prototype[p] = options_.separation * static_cast<float>(rng.normal());
    });
    return prototype;
  }

  SyntheticOptions options_;
  Split split_;
  std::size_t size_;
  uint64_t sample_stream_;
  // [classes][pixels], each class written once by prototype_of.
  std::unique_ptr<float[]> prototypes_;
  mutable std::deque<std::once_flag> prototype_made_;
};

void validate(const SyntheticOptions& options) {
  if (options.channels <= 0 || options.height <= 0 || options.width <= 0) {
    throw std::invalid_argument(fmt::format("synthetic dataset: image shape {}x{}x{} must be positive",
                                            options.channels, options.height, options.width));
  }
  if (options.classes < 2) {
    throw std::invalid_argument(fmt::format("synthetic dataset: classes = {}, need at least 2",
                                            options.classes));
  }
  if (options.train_size == 0 || options.test_size == 0) {
    throw std::invalid_argument("synthetic dataset: train_size and test_size must be positive");
  }
}

}  // namespace

std::unique_ptr<Dataset> make_synthetic_dataset(const SyntheticOptions& options, Split split) {
  validate(options);
  return std::make_unique<SyntheticDataset>(options, split);
}

}  // namespace st::data
