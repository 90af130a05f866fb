#include "core/train/node/synthetic_gradients.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <tuple>

#include "core/data/dataset.h"
#include "core/data/random.h"
#include "core/model/model.h"
#include "core/util/sort_nonnegative.h"

namespace st::train {
namespace {

// |g| at `samples` evenly spaced ranks of the sorted magnitudes (all of
// them for a smaller layer): an empirical distribution that keeps exact
// zeros (dead units) and the heavy tail a sparsifier selects from, which an
// interpolated handful of quantiles would smear. `magnitudes` is |g| as
// LibTorch computed it; plain memory, so this runs on any thread.
std::vector<float> abs_samples(const float* magnitudes, std::size_t count, int samples) {
  std::vector<float> sorted(magnitudes, magnitudes + count);
  sort_nonnegative(sorted);
  if (sorted.size() <= static_cast<std::size_t>(samples)) return sorted;
  std::vector<float> out;
  for (int i = 0; i < samples; ++i)
    out.push_back(sorted[static_cast<std::size_t>((static_cast<double>(i) + 0.5) / samples * static_cast<double>(sorted.size()))]);
  return out;
}

// Each value: a magnitude drawn uniformly from the samples, a fair-coin
// sign; `stream` is positioned at this buffer's first value. SplitMix64
// (core/data/random.h): drawing one value per gradient element of a
// 60M-parameter model, std::mt19937_64 plus its distributions costs several
// times more for no benefit here.
// A power-of-two sample count (every layer larger than kSamples) picks by
// mask, the same index as the modulo at a fraction of its cost.
void draw_buffer(const std::vector<float>& magnitudes, data::SplitMix64 stream, std::vector<float>& out) {
  const uint64_t count = magnitudes.size();
  const bool power_of_two = (count & (count - 1)) == 0;
  for (auto& v : out) {
    const uint64_t bits = stream.next();
    const uint64_t pick = power_of_two ? ((bits >> 1) & (count - 1)) : ((bits >> 1) % count);
    const float magnitude = magnitudes[pick];
    v = (bits & 1) ? magnitude : -magnitude;
  }
}

// Runs task(i) for i in [0, count) on up to hardware_concurrency threads
// (tasks are independent; results do not depend on the thread). The first
// exception is rethrown after every thread has joined; if a thread cannot
// be started, the ones running (at least this one) do all the tasks.
void parallel_over(std::size_t count, const std::function<void(std::size_t)>& task) {
  const std::size_t threads =
      std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

std::shared_ptr<const SyntheticGradients> SyntheticGradients::shared(const model::ModelSpec& model,
                                                                     const data::Dataset& train, uint64_t seed,
                                                                     StageSampling sample) {
  static std::mutex mutex;
  using Key = std::tuple<std::string, std::string, const data::Dataset*, uint64_t, double, std::size_t>;
  static std::map<Key, std::weak_ptr<const SyntheticGradients>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{model.name, model.torchscript, &train, seed, sample.fraction, sample.min_elements}];
  if (auto existing = slot.lock()) return existing;
  std::shared_ptr<SyntheticGradients> made(new SyntheticGradients());
  made->record_and_draw(model, train, seed, sample);
  slot = made;
  return made;
}

void SyntheticGradients::record_and_draw(const model::ModelSpec& model_spec, const data::Dataset& train, uint64_t seed,
                                         StageSampling sample) {
  const auto shape = train.image_shape();
  const auto m = model::make_model(model_spec, {shape.channels, shape.height, shape.width, train.classes()}, seed);
  std::vector<std::size_t> first(kRecordBatch);
  std::iota(first.begin(), first.end(), std::size_t{0});
  const auto batch = train.get_batch(Span<const std::size_t>(first));
  m.zero_grad();
  torch::nn::functional::cross_entropy(m.forward(batch.images), batch.labels).backward();
  // Layer by layer in registration order, each layer's buffers continuing
  // one stream (SplitMix64::discard finds each layer's start without
  // drawing), drawn in parallel: the setup of a 60M-parameter model was
  // seconds of one thread.
  const auto parameters = m.named_parameters();
  std::vector<data::SplitMix64> layer_stream;
  data::SplitMix64 stream(seed * 0x2545f4914f6cdd1dULL + 1);
  for (const auto& p : parameters) {
    names_.push_back(p.name);
    numels_.push_back(static_cast<std::size_t>(p.tensor.numel()));
    shapes_.push_back(p.tensor.sizes().vec());
    layer_stream.push_back(stream);
    stream.discard(static_cast<uint64_t>(numels_.back()) * kPoolBuffers);
  }
  sampling_ = LayerSampling(numels_, sample);
  // LibTorch on this thread (its ops may start thread teams of their own),
  // plain memory on the pool's threads.
  std::vector<at::Tensor> magnitudes;
  for (const auto& p : parameters) {
    const auto grad = p.tensor.grad().defined() ? p.tensor.grad() : torch::zeros_like(p.tensor);
    if (torch::isnan(grad).any().item<bool>())
      throw std::runtime_error(fmt::format("timing mode: the gradient of {} recorded from model {} has NaN values",
                                           p.name, model_spec.name));
    magnitudes.push_back(grad.detach().abs().flatten().contiguous());
  }
  std::vector<const float*> data;
  for (const auto& t : magnitudes) data.push_back(t.data_ptr<float>());
  pool_.resize(parameters.size());
  parallel_over(parameters.size(), [&](std::size_t layer) {
    const auto q = abs_samples(data[layer], numels_[layer], kSamples);
    data::SplitMix64 buffer_stream = layer_stream[layer];
    for (int b = 0; b < kPoolBuffers; ++b) {
      pool_[layer].emplace_back(sampling_.numels()[layer]);
      draw_buffer(q, buffer_stream, pool_[layer].back());
      buffer_stream.discard(numels_[layer]);
    }
  });
}

void SyntheticGradients::fill(std::size_t layer, uint64_t draw, float scale, float* out) const {
  const uint64_t bits = data::SplitMix64(draw).next();
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
