// tests/bench/st_dense_step_bench: the dense systems' optimizer step, two
// ways, side by side on the same sizes: the sparse SGD kernel over the full
// index list 0..numel-1 (how ddp and the local-step systems stepped before)
// and DenseSgd, the contiguous loop that replaced it (core/optim/dense_sgd.h;
// the two give bitwise the same parameters, tests/optim_dense_test.cc).
// SGD with momentum 0.9 and weight decay 1e-4, as the systems run it, one
// thread, the SIMD level the engine picks. After the table it prints, per
// size, the ratio of the medians (sparse / dense).
//
//   st_dense_step_bench [--numel N[,N...]] [google benchmark flags]
//   (default sizes: 1.7M, a small CNN's worth, and 11,173,962, ResNet-18's)
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/optim/dense_sgd.h"
#include "core/optim/sparse_optimizer.h"

namespace {

using st::LargeVector;
using st::Span;

const st::optim::SgdOptions kOptions{0.01, 0.9, 0.0, false, 1e-4};

std::vector<std::size_t> take_sizes(int& argc, char** argv) {
  std::vector<std::size_t> sizes = {1700000, 11173962};
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--numel") != 0) continue;
    sizes.clear();
    std::stringstream list(argv[i + 1]);
    for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::strtoull(item.c_str(), nullptr, 10));
    for (int j = i; j + 2 <= argc; ++j) argv[j] = argv[j + 2];
    argc -= 2;
    break;
  }
  for (std::size_t n : sizes) {
    if (n == 0 || n > UINT32_MAX) throw std::invalid_argument("--numel takes sizes in 1..2^32-1, comma-separated");
  }
  return sizes;
}

struct Inputs {
  LargeVector<float> param;
  LargeVector<float> grad;
};

Inputs make_inputs(std::size_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Inputs in;
  in.param.resize(n);
  in.grad.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    in.param[i] = normal(rng);
    in.grad[i] = 1e-3f * normal(rng);
  }
  return in;
}

void set_counters(benchmark::State& state, std::size_t n) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

void sparse_all_indices(benchmark::State& state, std::size_t n) {
  Inputs in = make_inputs(n);
  std::vector<uint32_t> indices(n);
  for (std::size_t i = 0; i < n; ++i) indices[i] = static_cast<uint32_t>(i);
  auto sgd = st::optim::make_sparse_sgd(kOptions);
  auto sgd_state = sgd->make_state(n, "bench");
  const st::optim::SparseGrad grad{Span<const uint32_t>(indices), Span<const float>(in.grad.data(), n)};
  for (auto _ : state) sgd->step(Span<float>(in.param.data(), n), grad, *sgd_state);
  set_counters(state, n);
}

void dense(benchmark::State& state, std::size_t n) {
  Inputs in = make_inputs(n);
  st::optim::DenseSgd sgd(kOptions);
  auto sgd_state = sgd.make_state(n, "bench");
  for (auto _ : state) {
    sgd.step(Span<float>(in.param.data(), n), Span<const float>(in.grad.data(), n), *sgd_state);
  }
  set_counters(state, n);
}

// The console table, plus the real time of each benchmark (the median when
// repetitions are asked for) for the ratios printed at the end.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  // Colours only on a terminal, so that a redirected run is plain text.
  RatioReporter() : ConsoleReporter(isatty(STDOUT_FILENO) ? OO_Color : OO_None) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") continue;
      real_ms_[run.run_name.str()] = run.GetAdjustedRealTime();  // in the benchmark's unit: ms
    }
    ConsoleReporter::ReportRuns(runs);
  }
  double real_ms(const std::string& name) const {
    const auto found = real_ms_.find(name);
    return found == real_ms_.end() ? 0.0 : found->second;
  }

 private:
  std::map<std::string, double> real_ms_;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  try {
    sizes = take_sizes(argc, argv);
  } catch (const std::exception& error) {
    fmt::print(stderr, "st_dense_step_bench: {}\n", error.what());
    return 1;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (std::size_t n : sizes) {
    benchmark::RegisterBenchmark(fmt::format("sparse_sgd_all_indices/numel:{}", n).c_str(), sparse_all_indices, n)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(fmt::format("dense_sgd/numel:{}", n).c_str(), dense, n)->Unit(benchmark::kMillisecond);
  }
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  for (std::size_t n : sizes) {
    const double sparse_ms = reporter.real_ms(fmt::format("sparse_sgd_all_indices/numel:{}", n));
    const double dense_ms = reporter.real_ms(fmt::format("dense_sgd/numel:{}", n));
    if (sparse_ms <= 0 || dense_ms <= 0) continue;  // filtered out
    fmt::print("ratio numel {}: sparse over all indices {:.3f} ms / dense {:.3f} ms = {:.2f}\n", n, sparse_ms, dense_ms,
               sparse_ms / dense_ms);
  }
  benchmark::Shutdown();
  return 0;
}
