#include "core/train/synthetic_gradients.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "core/data/dataset.h"
#include "core/model/model.h"

namespace st::train {
namespace {

// SplitMix64: a fast, well-mixed 64-bit generator. Drawing one value per
// gradient element of a 60M-parameter model, std::mt19937_64 plus its
// distributions costs several times more for no benefit here.
uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// |g| at `samples` evenly spaced ranks of the sorted magnitudes (all of
// them for a smaller layer): an empirical distribution that keeps exact
// zeros (dead units) and the heavy tail a sparsifier selects from, which an
// interpolated handful of quantiles would smear.
std::vector<float> abs_samples(const at::Tensor& grad, int samples) {
  auto values = grad.detach().abs().flatten().contiguous();
  std::vector<float> sorted(values.data_ptr<float>(), values.data_ptr<float>() + values.numel());
  std::sort(sorted.begin(), sorted.end());
  if (sorted.size() <= static_cast<std::size_t>(samples)) return sorted;
  std::vector<float> out;
  for (int i = 0; i < samples; ++i)
    out.push_back(sorted[static_cast<std::size_t>((static_cast<double>(i) + 0.5) / samples * static_cast<double>(sorted.size()))]);
  return out;
}

// Each value: a magnitude drawn uniformly from the samples, a fair-coin sign.
void draw_buffer(const std::vector<float>& magnitudes, uint64_t& state, std::vector<float>& out) {
  for (auto& v : out) {
    const uint64_t bits = splitmix(state);
    const float magnitude = magnitudes[(bits >> 1) % magnitudes.size()];
    v = (bits & 1) ? magnitude : -magnitude;
  }
}

}  // namespace

std::shared_ptr<const SyntheticGradients> SyntheticGradients::shared(const std::string& model,
                                                                     const data::Dataset& train, uint64_t seed) {
  static std::mutex mutex;
  static std::map<std::tuple<std::string, const data::Dataset*, uint64_t>, std::weak_ptr<const SyntheticGradients>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{model, &train, seed}];
  if (auto existing = slot.lock()) return existing;
  std::shared_ptr<SyntheticGradients> made(new SyntheticGradients());
  made->record_and_draw(model, train, seed);
  slot = made;
  return made;
}

void SyntheticGradients::record_and_draw(const std::string& model_name, const data::Dataset& train, uint64_t seed) {
  const auto shape = train.image_shape();
  const auto m = model::make_model(model_name, {shape.channels, shape.height, shape.width, train.classes()}, seed);
  std::vector<std::size_t> first(kRecordBatch);
  std::iota(first.begin(), first.end(), std::size_t{0});
  const auto batch = train.get_batch(Span<const std::size_t>(first));
  m.zero_grad();
  torch::nn::functional::cross_entropy(m.forward(batch.images), batch.labels).backward();
  uint64_t state = seed * 0x2545f4914f6cdd1dULL + 1;
  for (const auto& p : m.named_parameters()) {
    names_.push_back(p.name);
    numels_.push_back(static_cast<std::size_t>(p.tensor.numel()));
    shapes_.push_back(p.tensor.sizes().vec());
    const auto grad = p.tensor.grad().defined() ? p.tensor.grad() : torch::zeros_like(p.tensor);
    const auto q = abs_samples(grad, kSamples);
    pool_.emplace_back();
    for (int b = 0; b < kPoolBuffers; ++b) {
      pool_.back().emplace_back(numels_.back());
      draw_buffer(q, state, pool_.back().back());
    }
  }
}

void SyntheticGradients::fill(std::size_t layer, uint64_t draw, float scale, float* out) const {
  uint64_t state = draw;
  const uint64_t bits = splitmix(state);
  const auto& buffer = pool_[layer][bits % kPoolBuffers];
  const std::size_t n = buffer.size();
  const std::size_t offset = n ? static_cast<std::size_t>((bits >> 8) % n) : 0;
  // out = rotate(buffer, offset) x scale
  std::transform(buffer.begin() + static_cast<std::ptrdiff_t>(offset), buffer.end(), out,
                 [scale](float v) { return v * scale; });
  std::transform(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(offset), out + (n - offset),
                 [scale](float v) { return v * scale; });
}

}  // namespace st::train
