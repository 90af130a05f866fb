#include "apps/bench/profile_kernels.h"

#include <torch/torch.h>

#include <algorithm>
#include <random>

#include "core/compress/compressor.h"
#include "core/device/compute_device.h"
#include "core/device/copy_engine.h"
#include "core/device/event_clock.h"
#include "core/device/torch_device.h"
#include "core/optim/sparse_optimizer.h"

namespace st::bench {

int device_index(const device::ComputeDevice& on) { return on.is_cuda() ? device::torch_device(on).index() : 0; }

namespace {

constexpr std::size_t kKernelElements = 4 << 20;

std::vector<float> normal_values(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> out(n);
  for (auto& v : out) v = normal(rng);
  return out;
}

// One compressor on the same gradient at each density. Each call keeps the
// tensor's state, so threshold and cutoff hints carry over from the last
// call as they do between iterations of training (where the gradient
// changes more than here: a lower bound for the hinted compressors).
CompressCurve time_compression(const TimerOptions& timer, const std::vector<float>& grad, const std::string& name) {
  auto compressor = compress::make_compressor(name, {simd::default_level(), 1});
  CompressCurve out;
  for (const double density : kCompressDensities) {
    const std::size_t k = compress::k_for_density(grad.size(), density);
    auto state = compressor->make_state(grad.size(), k, "profile");
    compress::SparseChunk chunk;
    chunk.reserve(compressor->max_output(grad.size(), k));
    MedianTimer t(timer);
    t.add("compress", [&] { chunk.count = compressor->compress(Span<const float>(grad), k, *state, chunk.buffers()); });
    out.emplace_back(density, t.run().at("compress") * 1e6 / static_cast<double>(grad.size()));
  }
  return out;
}

CompressorCurves curves_on(const TimerOptions& timer, const std::vector<float>& grad) {
  CompressorCurves out;
  out.thresholdv16 = time_compression(timer, grad, "thresholdv16");
  for (const auto& name : compress::compressors_with_own_curves())
    out.others.emplace_back(name, time_compression(timer, grad, name));
  return out;
}

// A read of the master parameters through their view: exact lazy momentum
// after a sparse step at 5%, extrapolated one step ahead (the lookahead's
// weight prediction), which is what a stale forward's load reads.
double time_view(const TimerOptions& timer, const std::vector<float>& grad) {
  const std::size_t n = grad.size();
  auto sgd = optim::make_sparse_sgd({0.01, 0.9, 0.0, false, 0.0, optim::LazyMomentum::kExact});
  auto state = sgd->make_state(n, "profile-view");
  std::vector<float> params(n), out(n);
  std::vector<uint32_t> indices;
  std::vector<float> values;
  for (std::size_t i = 0; i < n; i += 20) {
    indices.push_back(static_cast<uint32_t>(i));
    values.push_back(grad[i]);
  }
  for (int step = 0; step < 3; ++step)
    sgd->step(Span<float>(params), {Span<const uint32_t>(indices), Span<const float>(values)}, *state);
  MedianTimer t(timer);
  t.add("view", [&] { sgd->extrapolate(Span<const float>(params), *state, 1, Span<float>(out)); });
  return t.run().at("view") * 1e6 / static_cast<double>(n);
}

}  // namespace

KernelNs time_kernels(const TimerOptions& timer) {
  constexpr std::size_t n = kKernelElements;
  constexpr double density = 0.05;
  const std::vector<float> grad = normal_values(n);
  std::vector<float> sum(n), params(n), copy(n);
  const std::size_t k = compress::k_for_density(n, density);
  auto compressor = compress::make_compressor("thresholdv16", {simd::default_level(), 1});
  auto state = compressor->make_state(n, k, "profile");
  compress::SparseChunk chunk;
  chunk.reserve(compressor->max_output(n, k));
  chunk.count = compressor->compress(Span<const float>(grad), k, *state, chunk.buffers());
  auto sgd = optim::make_sparse_sgd({0.01, 0.9, 0.0, false, 0.0});
  auto sgd_state = sgd->make_state(n, "profile");
  std::vector<uint32_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<uint32_t>(i);
  const auto tensor = torch::from_blob(const_cast<float*>(grad.data()), {static_cast<int64_t>(n)});
  MedianTimer t(timer);
  t.add("gather", [&] {
    for (std::size_t i = 0; i < n; ++i) sum[i] += grad[i];
  });
  // What a load's read out of the master is (VersionedParameters::read_layer).
  t.add("copy", [&] { std::copy(grad.begin(), grad.end(), copy.begin()); });
  t.add("dense_step", [&] {
    sgd->step(Span<float>(params), {Span<const uint32_t>(all), Span<const float>(grad)}, *sgd_state);
  });
  t.add("topk", [&] { (void)torch::topk(tensor.abs(), static_cast<int64_t>(k)); });
  auto ms = t.run();
  // The sparse step at 5%: the indices the compressor chose.
  MedianTimer sparse(timer);
  sparse.add("sparse_step", [&] {
    sgd->step(Span<float>(params),
              {Span<const uint32_t>(chunk.indices.data(), chunk.count), Span<const float>(chunk.values.data(), chunk.count)},
              *sgd_state);
  });
  const double sparse_ms = sparse.run().at("sparse_step");
  const double per_element = 1e6 / static_cast<double>(n);
  KernelNs out;
  out.gather = ms.at("gather") * per_element;
  out.copy = ms.at("copy") * per_element;
  out.view = time_view(timer, grad);
  CompressorCurves curves = curves_on(timer, grad);
  out.compress = std::move(curves.thresholdv16);
  out.other_compressors = std::move(curves.others);
  out.optimize_index = sparse_ms * 1e6 / static_cast<double>(std::max<std::size_t>(1, chunk.count));
  out.optimize_dense = ms.at("dense_step") * per_element;
  out.topk = ms.at("topk") * per_element;
  return out;
}

// On 4M elements.
DeviceKernelNs time_device_kernels(const TimerOptions& timer, const device::ComputeDevice& on) {
  constexpr int64_t n = 4 << 20;
  const auto where = device::torch_device(on);
  const auto grad = torch::randn({n}).to(where);
  auto params = torch::zeros({n}).to(where);
  auto velocity = torch::zeros({n}).to(where);
  const int64_t k = static_cast<int64_t>(compress::k_for_density(static_cast<std::size_t>(n), 0.05));
  MedianTimer t(timer);
  t.add("dense_step", [&] {
    velocity.mul_(0.9).add_(grad);
    params.add_(velocity, -0.01);
    device::synchronize(on, device_index(on));
  });
  t.add("topk", [&] {
    (void)torch::topk(grad.abs(), k);
    device::synchronize(on, device_index(on));
  });
  const auto ms = t.run();
  const double per_element = 1e6 / static_cast<double>(n);
  return {ms.at("dense_step") * per_element, ms.at("topk") * per_element};
}

// 64 MiB between device memory and page-locked host memory, through the
// engine's own copy engine.
TransferGbps time_transfers(const TimerOptions& timer, const device::ComputeDevice& on) {
  constexpr std::size_t n = 16 << 20;  // floats: 64 MiB
  auto engine = device::make_cuda_copy_engine(device_index(on));
  const auto host = engine->host_buffer(n);
  const auto dev = torch::randn({static_cast<int64_t>(n)}).to(device::torch_device(on));
  MedianTimer t(timer);
  t.add("d2h", [&] {
    engine->follow_compute();
    engine->copy(dev, host);
    engine->mark()->wait();
  });
  t.add("h2d", [&] {
    engine->copy(host, dev);
    engine->mark()->wait();
  });
  const auto ms = t.run();
  const double bytes = 4.0 * static_cast<double>(n);
  return {bytes / (ms.at("d2h") * 1e6), bytes / (ms.at("h2d") * 1e6)};  // GB/s
}

CompressorCurves time_compressor_curves(const TimerOptions& timer) {
  return curves_on(timer, normal_values(kKernelElements));
}

}  // namespace st::bench
