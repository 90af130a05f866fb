// tests/bench/st_bench: the compressors and sparse optimizers as plain
// Google Benchmark benchmarks, for --benchmark_filter, --benchmark_format
// and the other flags of the library. Ratios against torch::topk and
// memcpy, and quality measures, come from `stellatrain bench` instead.
//
//   st_bench [--numel N] [google benchmark flags]   (default N = 11173962)
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "apps/bench/bench_inputs.h"
#include "core/compress/compressor.h"
#include "core/compress/compressor_names.h"
#include "core/optim/sparse_optimizer.h"

namespace {

std::size_t take_numel_flag(int& argc, char** argv) {
  std::size_t numel = st::bench::kDefaultNumel;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--numel") == 0 && i + 1 < argc) {
      numel = std::strtoull(argv[i + 1], nullptr, 10);
      for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
      argc -= 2;
      break;
    }
  }
  if (numel == 0) throw std::invalid_argument("--numel must be a positive integer");
  return numel;
}

void set_bytes(benchmark::State& state, std::size_t numel) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * numel * sizeof(float)));
}

void register_all(const std::shared_ptr<st::bench::BenchInput>& input) {
  const std::size_t n = input->values.size();
  benchmark::RegisterBenchmark("memcpy", [input, n](benchmark::State& state) {
    std::vector<float> out(n);
    for (auto _ : state) {
      std::memcpy(out.data(), input->values.data(), n * sizeof(float));
      benchmark::DoNotOptimize(out.data());
    }
    set_bytes(state, n);
  })->Unit(benchmark::kMillisecond);
  for (double density : {0.01, 0.05}) {
    const std::size_t k = st::compress::k_for_density(n, density);
    benchmark::RegisterBenchmark(fmt::format("torch_topk/density:{}", density).c_str(), [input, k, n](benchmark::State& state) {
      auto t = at::from_blob(input->values.data(), {static_cast<int64_t>(n)}, at::kFloat);
      for (auto _ : state) benchmark::DoNotOptimize(at::topk(t.abs(), static_cast<int64_t>(k)));
      set_bytes(state, n);
    })->Unit(benchmark::kMillisecond);
    auto names = st::compress::base_compressor_names();
    names.push_back("ef:thresholdv16");
    for (const std::string& name : names) {
      benchmark::RegisterBenchmark(fmt::format("{}/density:{}", name, density).c_str(), [input, name, k, n](benchmark::State& state) {
        auto c = st::compress::make_compressor(name);
        auto s = c->make_state(n, k, "bench");
        st::compress::SparseChunk chunk;
        chunk.reserve(c->max_output(n, k));
        for (auto _ : state) chunk.count = c->compress(st::Span<const float>(input->values), k, *s, chunk.buffers());
        set_bytes(state, n);
      })->Unit(benchmark::kMillisecond);
    }
    for (const char* name : {"sparse_sgd", "sparse_adam"}) {
      benchmark::RegisterBenchmark(fmt::format("{}/density:{}", name, density).c_str(), [input, name, k, n](benchmark::State& state) {
        auto c = st::compress::make_compressor("thresholdv16");
        auto s = c->make_state(n, k, "bench");
        st::compress::SparseChunk chunk;
        chunk.reserve(c->max_output(n, k));
        chunk.count = c->compress(st::Span<const float>(input->values), k, *s, chunk.buffers());
        const st::optim::SparseGrad grad{st::Span<const uint32_t>(chunk.indices.data(), chunk.count),
                                         st::Span<const float>(chunk.values.data(), chunk.count)};
        auto opt = std::strcmp(name, "sparse_sgd") == 0 ? st::optim::make_sparse_sgd({0.01, 0.9})
                                                        : st::optim::make_sparse_adam({});
        auto ps = opt->make_state(n, "bench");
        std::vector<float> param = input->next;
        for (auto _ : state) opt->step(st::Span<float>(param), grad, *ps);
        set_bytes(state, n);
      })->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::size_t numel = take_numel_flag(argc, argv);
    benchmark::Initialize(&argc, argv);
    at::set_num_threads(1);
    auto input = std::make_shared<st::bench::BenchInput>(st::bench::make_input("gaussian", numel, 1, [](const std::string&) {}));
    register_all(input);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  } catch (const std::exception& e) {
    fmt::print(stderr, "st_bench: {}\n", e.what());
    return 1;
  }
  return 0;
}
