#pragma once
// Real gradients for compression and optimizer benchmarks: a model trained a
// few steps on Fashion-MNIST, then one more backward, flattened. Gradients of
// a trained model have the heavy-tailed, layer-dependent magnitudes that
// sparsifiers are designed for; random data would flatter or punish them.
// Torch-free header: benchmarks include it without LibTorch's compile cost.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/data/fashion_mnist.h"

namespace st::model {

using data::fashion_mnist_available;

inline constexpr int kDefaultRealGradientSteps = 3;

struct RealGradientOptions {
  std::string model = "cnn";  // any name in model_names()
  int train_steps = kDefaultRealGradientSteps;  // SGD lr 0.01, momentum 0.9
  uint64_t seed = 1;          // initialization and data order
  int batch = 32;
  // Fall back to synthetic 1x28x28 data when Fashion-MNIST is not installed.
  // Off by default: a benchmark should not silently measure other data.
  bool synthetic_fallback = false;
  std::string data_dir;  // empty: data::default_fashion_mnist_dir()
  int threads = 1;       // LibTorch intra-op threads during the computation
};

struct GradientTensor {
  std::string name;  // parameter name, e.g. "conv1.weight"
  std::vector<int64_t> shape;
  std::size_t offset = 0;  // into RealGradient::values
  std::size_t numel = 0;
};

struct RealGradient {
  std::string model;
  std::string data_source;  // "fashion-mnist" or "synthetic"
  std::vector<float> values;  // all parameter gradients, in parameter order
  std::vector<GradientTensor> tensors;
};

// Deterministic for given options on a given machine. Throws
// std::runtime_error (naming the missing file and the package to install)
// when Fashion-MNIST is absent and synthetic_fallback is off, and
// std::invalid_argument for an unknown model or bad numbers.
RealGradient compute_real_gradient(const RealGradientOptions& options);

// The flattened gradient only; see RealGradientOptions for the defaults.
std::vector<float> real_gradient(const std::string& model, int train_steps, uint64_t seed, int batch = 32);

}  // namespace st::model
