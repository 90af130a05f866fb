#include "apps/bench/bench_suite.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <torch/optim/sgd.h>

#include <cstring>
#include <memory>

#include "apps/bench/quality.h"
#include "core/compress/compressor.h"
#include "core/optim/sparse_optimizer.h"

namespace st::bench {
namespace {

using nlohmann::json;

// Warm-up calls before timing and before the count check: enough for every
// threshold compressor to have adapted (the tests use 5).
constexpr int kWarmupCalls = 5;

at::Tensor view_of(const std::vector<float>& v) {
  return at::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, at::kFloat);
}

struct Baselines {
  double memcpy_ms = 0.0;
  double torch_topk_ms = 0.0;
};

// Registers the two baselines every entry's ratios refer to.
void add_baselines(MedianTimer& timer, const BenchInput& input, std::size_t k, std::vector<float>& scratch) {
  const std::size_t bytes = input.values.size() * sizeof(float);
  timer.add("memcpy", [&input, &scratch, bytes] {
    std::memcpy(scratch.data(), input.values.data(), bytes);
    benchmark::DoNotOptimize(scratch.data());
  });
  timer.add("torch_topk", [&input, k] {
    // What a PyTorch top-k compressor does: topk of the magnitudes.
    auto result = at::topk(view_of(input.values).abs(), static_cast<int64_t>(k));
    benchmark::DoNotOptimize(std::get<1>(result).data_ptr());
  });
}

json base_entry(const std::string& name, const std::string& kind, const BenchInput& input, double density,
                std::size_t k, const SuiteOptions& options, double ms, const Baselines& b) {
  const double gb = static_cast<double>(input.values.size() * sizeof(float)) / 1e9;
  return json{{"name", name},
              {"kind", kind},
              {"input", input.name},
              {"numel", input.values.size()},
              {"density", density},
              {"k", k},
              {"threads", options.threads},
              {"simd", simd::level_name(options.simd)},
              {"median_ms", ms},
              {"gbps", gb / (ms / 1e3)},
              {"vs_torch_topk", b.torch_topk_ms / ms},
              {"vs_memcpy", ms / b.memcpy_ms}};
}

struct CompressorRun {
  std::unique_ptr<compress::Compressor> compressor;
  std::unique_ptr<compress::TensorState> state;
  compress::SparseChunk chunk;
};

CompressorRun prepare(const std::string& name, const BenchInput& input, std::size_t k, const SuiteOptions& o) {
  CompressorRun run;
  run.compressor = compress::make_compressor(name, {o.simd, 1});
  run.state = run.compressor->make_state(input.values.size(), k, input.name);
  run.chunk.reserve(run.compressor->max_output(input.values.size(), k));
  return run;
}

std::size_t compress_once(CompressorRun& run, const std::vector<float>& g, std::size_t k) {
  run.chunk.count = run.compressor->compress(Span<const float>(g), k, *run.state, run.chunk.buffers());
  return run.chunk.count;
}

// Quality of one compressor's selection on the input, and how well its
// threshold (after warm-up on this step's gradient) predicts the next step's.
void add_quality(json& entry, const std::string& name, const BenchInput& input, std::size_t k,
                 const SuiteOptions& o, const SelectionQuality& quality) {
  auto run = prepare(name, input, k, o);
  for (int i = 0; i < kWarmupCalls; ++i) compress_once(run, input.values, k);
  const std::size_t count = compress_once(run, input.values, k);
  const std::vector<float> selected(run.chunk.values.begin(), run.chunk.values.begin() + count);
  entry["count"] = count;
  entry["count_ratio"] = static_cast<double>(count) / static_cast<double>(std::max<std::size_t>(k, 1));
  entry["l2_capture"] = quality.l2_capture(selected);
  if (name.find("thresholdv16") != std::string::npos)
    entry["block_efficiency"] = quality.block_efficiency(selected, (count + 15) / 16);
  if (name.find("thresholdv") != std::string::npos) {
    // The threshold learnt on this step, applied to the next step's gradient.
    compress_once(run, input.next, k);
    entry["threshold_ratio_next"] = static_cast<double>(run.state->last_threshold_count) / static_cast<double>(k);
  }
}

}  // namespace

json run_compress_suite(const BenchInput& input, double density, const SuiteOptions& options,
                        const Progress& progress) {
  const std::size_t k = compress::k_for_density(input.values.size(), density);
  at::set_num_threads(options.threads);
  std::vector<float> scratch(input.values.size());
  MedianTimer timer(options.timer);
  add_baselines(timer, input, k, scratch);
  std::vector<CompressorRun> runs;
  runs.reserve(options.compressors.size());
  for (const auto& name : options.compressors) {
    runs.push_back(prepare(name, input, k, options));
    auto* run = &runs.back();
    for (int i = 0; i < kWarmupCalls; ++i) compress_once(*run, input.values, k);
    timer.add(name, [run, &input, k] { compress_once(*run, input.values, k); });
  }
  progress(fmt::format("timing compressors on {} ({} floats, density {})", input.name, input.values.size(), density));
  const auto ms = timer.run();
  const Baselines b{ms.at("memcpy"), ms.at("torch_topk")};

  json entries = json::array();
  entries.push_back(base_entry("memcpy", "baseline", input, density, k, options, b.memcpy_ms, b));
  entries.push_back(base_entry("torch_topk", "baseline", input, density, k, options, b.torch_topk_ms, b));
  progress("measuring selection quality");
  const SelectionQuality quality(input.values);
  for (const auto& name : options.compressors) {
    json entry = base_entry(name, "compressor", input, density, k, options, ms.at(name), b);
    add_quality(entry, name, input, k, options, quality);
    entries.push_back(std::move(entry));
  }
  return entries;
}

json run_optim_suite(const BenchInput& input, double density, const SuiteOptions& options,
                     const Progress& progress) {
  const std::size_t n = input.values.size();
  const std::size_t k = compress::k_for_density(n, density);
  at::set_num_threads(options.threads);
  // The sparse gradient StellaTrain's optimizer sees: thresholdv16's blocks.
  auto selection = prepare("thresholdv16", input, k, options);
  for (int i = 0; i < kWarmupCalls; ++i) compress_once(selection, input.values, k);
  const std::size_t count = compress_once(selection, input.values, k);
  const optim::SparseGrad grad{Span<const uint32_t>(selection.chunk.indices.data(), count),
                               Span<const float>(selection.chunk.values.data(), count)};

  std::vector<float> scratch(n);
  MedianTimer timer(options.timer);
  add_baselines(timer, input, k, scratch);

  // torch::optim::SGD with momentum: the dense step a DDP worker takes.
  auto dense_param = at::empty({static_cast<int64_t>(n)}, at::kFloat).copy_(view_of(input.next));
  dense_param.mutable_grad() = view_of(input.values).clone();
  torch::optim::SGD dense_sgd({dense_param}, torch::optim::SGDOptions(0.01).momentum(0.9));
  dense_sgd.step();  // allocate the momentum buffer before timing
  timer.add("torch_dense_sgd", [&dense_sgd] { dense_sgd.step(); });

  const optim::ExecutionOptions exec{options.simd, options.threads};
  std::vector<std::unique_ptr<optim::SparseOptimizer>> optimizers;
  std::vector<std::unique_ptr<optim::ParamState>> states;
  std::vector<LargeVector<float>> params;  // master copies, as the engine keeps them
  params.reserve(options.optimizers.size());  // the timed bodies keep pointers into it
  // sparse_sgd_decay and sparse_sgd_exact alternate between the gradient and
  // the same blocks one block further on, so that most touched entries have
  // missed a step: the case where exact lazy momentum does its catch-up.
  std::vector<uint32_t> shifted_indices;
  for (std::size_t j = 0; j < count; ++j)
    if (grad.indices[j] + 16 < n) shifted_indices.push_back(grad.indices[j] + 16);
  const optim::SparseGrad shifted{Span<const uint32_t>(shifted_indices),
                                  Span<const float>(selection.chunk.values.data(), shifted_indices.size())};
  for (const auto& name : options.optimizers) {
    bool alternate = false;
    if (name == "sparse_sgd") {
      optimizers.push_back(optim::make_sparse_sgd({0.01, 0.9}, exec));
    } else if (name == "sparse_sgd_decay" || name == "sparse_sgd_exact") {
      const auto lazy = name == "sparse_sgd_exact" ? optim::LazyMomentum::kExact : optim::LazyMomentum::kDecay;
      optimizers.push_back(optim::make_sparse_sgd({0.01, 0.9, 0.0, false, 0.0, lazy}, exec));
      alternate = true;
    } else if (name == "sparse_adam") {
      optimizers.push_back(optim::make_sparse_adam({}, exec));
    } else {
      throw std::invalid_argument(fmt::format(
          "unknown optimizer '{}' (expected sparse_sgd, sparse_sgd_decay, sparse_sgd_exact or sparse_adam)", name));
    }
    states.push_back(optimizers.back()->make_state(n, input.name));
    params.emplace_back(input.next.begin(), input.next.end());
    auto* opt = optimizers.back().get();
    auto* state = states.back().get();
    auto* param = &params.back();
    opt->step(Span<float>(*param), grad, *state);
    if (alternate) {
      auto flip = std::make_shared<bool>(false);
      timer.add(name, [opt, state, param, grad, shifted, flip] {
        *flip = !*flip;
        opt->step(Span<float>(*param), *flip ? shifted : grad, *state);
      });
    } else {
      timer.add(name, [opt, state, param, grad] { opt->step(Span<float>(*param), grad, *state); });
    }
  }
  progress(fmt::format("timing optimizers on {} ({} floats, density {})", input.name, n, density));
  const auto ms = timer.run();
  const Baselines b{ms.at("memcpy"), ms.at("torch_topk")};
  const double dense_ms = ms.at("torch_dense_sgd");

  json entries = json::array();
  for (const std::string name : {"memcpy", "torch_topk", "torch_dense_sgd"}) {
    json e = base_entry(name, "baseline", input, density, k, options, ms.at(name), b);
    e["vs_torch_dense_sgd"] = dense_ms / ms.at(name);
    entries.push_back(std::move(e));
  }
  for (const auto& name : options.optimizers) {
    json e = base_entry(name, "optimizer", input, density, k, options, ms.at(name), b);
    e["count"] = count;
    e["vs_torch_dense_sgd"] = dense_ms / ms.at(name);
    entries.push_back(std::move(e));
  }
  return entries;
}

}  // namespace st::bench
