#pragma once
// The `stellatrain bench compress|optim` suites. Each returns a JSON array of
// entries: name, kind, input, numel, density, k, count, threads, simd,
// median_ms, gbps (dense gradient bytes / time), vs_torch_topk
// (torch::topk(|g|) time / this time), vs_memcpy (this time / single-thread
// memcpy time of the gradient's bytes); compressors add l2_capture,
// block_efficiency (block compressors), count_ratio (= count / k) and
// threshold_ratio_next (threshold: count_ratio = count / k, and threshold_ratio_next = what the
// threshold learnt on this step alone selects on the next step's gradient,
// divided by k); optimizers add vs_torch_dense_sgd. See docs/benchmarks.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/bench/bench_inputs.h"
#include "apps/bench/median_timer.h"
#include "core/compress/compressor_names.h"
#include "core/simd/simd_level.h"

namespace st::bench {

struct SuiteOptions {
  std::vector<std::string> compressors = compress::base_compressor_names();
  std::vector<std::string> optimizers{"sparse_sgd", "sparse_adam"};
  int threads = 1;
  simd::Level simd = simd::default_level();
  TimerOptions timer;
};

nlohmann::json run_compress_suite(const BenchInput& input, double density, const SuiteOptions& options,
                                  const Progress& progress);
nlohmann::json run_optim_suite(const BenchInput& input, double density, const SuiteOptions& options,
                               const Progress& progress);

}  // namespace st::bench
