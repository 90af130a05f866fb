#pragma once
// Inputs for the compression and optimizer benchmarks: i.i.d. Gaussian, or
// real gradients of ResNet-18 / the CNN trained a few steps on Fashion-MNIST,
// computed at run time. Each input comes with the gradient of the following
// training step (`next`), so threshold prediction is measured on a real
// step-to-step change rather than on the gradient it was fitted to.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace st::bench {

struct BenchInput {
  std::string name;    // "gaussian", "resnet18", "cnn"
  std::string source;  // where the values came from, for the report
  std::vector<float> values;
  std::vector<float> next;
};

using Progress = std::function<void(const std::string&)>;

// The ResNet-18 gradient's size, also the default for Gaussian inputs.
constexpr std::size_t kDefaultNumel = 11173962;

// Inputs named on the command line: "gaussian", "resnet18", "cnn", or "real"
// (both models). "auto" is "real" when Fashion-MNIST is installed, else
// "gaussian". Throws std::invalid_argument for other names.
std::vector<std::string> expand_input_names(const std::vector<std::string>& names);

// numel 0 keeps a real gradient's own size; otherwise real gradients are
// tiled from independently seeded runs (or cropped) to numel elements.
BenchInput make_input(const std::string& name, std::size_t numel, uint64_t seed, const Progress& progress);

}  // namespace st::bench
