#pragma once
// A seeded, learnable synthetic image dataset for runs without real data
// (and for fast tests): every class has a fixed random prototype image and a
// sample is its class prototype plus Gaussian noise. Samples are generated on
// demand from (seed, split, index), so a sample does not depend on which batch
// asks for it and nothing is held in memory. Torch-free header.
#include <cstddef>
#include <cstdint>
#include <memory>

namespace st::data {

class Dataset;
enum class Split;

struct SyntheticOptions {
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int64_t classes = 10;
  std::size_t train_size = 60000;
  std::size_t test_size = 10000;
  uint64_t seed = 1;
  // Prototype pixels are N(0, separation^2), noise is N(0, noise^2). With the
  // defaults, prototypes of two classes lie about 14 noise deviations apart
  // (28x28), so even a linear model learns the task in a few dozen steps.
  float separation = 0.25f;
  float noise = 1.0f;
};

// Train and test splits share prototypes (same task) but draw samples from
// different streams. Throws std::invalid_argument on non-positive sizes.
std::unique_ptr<Dataset> make_synthetic_dataset(const SyntheticOptions& options, Split split);

}  // namespace st::data
