#include "apps/bench/bench_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "core/model/real_gradient.h"

namespace st::bench {
namespace {

std::vector<float> gaussian(std::size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Real gradients at two consecutive steps (train_steps and train_steps + 1)
// from one seeded run, tiled from runs with further seeds up to numel.
BenchInput real_input(const std::string& model, std::size_t numel, uint64_t seed, const Progress& progress) {
  BenchInput input;
  input.name = model;
  const int steps = model::kDefaultRealGradientSteps;
  for (uint64_t tile = 0; numel == 0 || input.values.size() < numel; ++tile) {
    progress(fmt::format("computing real {} gradient (tile {}, {} training steps on Fashion-MNIST)", model,
                         tile + 1, steps));
    const auto now = model::real_gradient(model, steps, seed + tile);
    const auto later = model::real_gradient(model, steps + 1, seed + tile);
    input.values.insert(input.values.end(), now.begin(), now.end());
    input.next.insert(input.next.end(), later.begin(), later.end());
    if (numel == 0) break;
  }
  if (numel != 0) {
    input.values.resize(numel);
    input.next.resize(numel);
  }
  input.source = fmt::format("{} gradient after {} SGD steps on Fashion-MNIST, batch 32{}", model, steps,
                             numel != 0 ? ", tiled from independently seeded runs" : "");
  return input;
}

}  // namespace

std::vector<std::string> expand_input_names(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    if (name == "auto") {
      const auto more = expand_input_names({model::fashion_mnist_available() ? "real" : "gaussian"});
      out.insert(out.end(), more.begin(), more.end());
    } else if (name == "real") {
      out.push_back("resnet18");
      out.push_back("cnn");
    } else if (name == "gaussian" || name == "resnet18" || name == "cnn") {
      out.push_back(name);
    } else {
      throw std::invalid_argument(fmt::format(
          "unknown benchmark input '{}' (expected gaussian, real, resnet18, cnn or auto)", name));
    }
  }
  return out;
}

BenchInput make_input(const std::string& name, std::size_t numel, uint64_t seed, const Progress& progress) {
  if (name == "gaussian") {
    const std::size_t n = numel == 0 ? kDefaultNumel : numel;
    BenchInput input{name, "i.i.d. N(0, 1)", gaussian(n, seed), gaussian(n, seed + 1)};
    return input;
  }
  return real_input(name, numel, seed, progress);
}

}  // namespace st::bench
