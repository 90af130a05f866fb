#include "core/optim/step_common.h"

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace st::optim::detail {
namespace {

// Index of the first entry that breaks the ordering or range rules, or
// indices.size() when all are valid. The common all-valid case is a single
// branch-free pass.
std::size_t first_bad_index(Span<const uint32_t> indices, std::size_t numel) {
  if (indices.empty()) return 0;
  bool ordered = true;
  for (std::size_t j = 1; j < indices.size(); ++j) ordered &= indices[j] > indices[j - 1];
  // Strictly increasing, so only the last index can be the first too large.
  if (ordered && indices[indices.size() - 1] < numel) return indices.size();
  for (std::size_t j = 0; j < indices.size(); ++j) {
    if (indices[j] >= numel || (j > 0 && indices[j] <= indices[j - 1])) return j;
  }
  return indices.size();
}

std::string index_error(Span<const uint32_t> indices, std::size_t position, std::size_t numel) {
  const std::string at = "index " + std::to_string(indices[position]) + " at position " + std::to_string(position);
  if (indices[position] >= numel) return at + " is out of range (numel " + std::to_string(numel) + ")";
  return at + " is not greater than the previous index " + std::to_string(indices[position - 1]) +
         " (indices must be strictly increasing)";
}

}  // namespace

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void check_sgd_options(const char* optimizer, const SgdOptions& o) {
  const std::string name(optimizer);
  require(o.lr >= 0, name + ": invalid learning rate " + std::to_string(o.lr));
  require(o.momentum >= 0, name + ": invalid momentum " + std::to_string(o.momentum));
  require(o.weight_decay >= 0, name + ": invalid weight_decay " + std::to_string(o.weight_decay));
  require(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
          name + ": Nesterov momentum requires a momentum and zero dampening");
}

void check_execution_options(const ExecutionOptions& exec) {
  require(exec.threads >= 1, "sparse optimizer: threads must be >= 1, got " + std::to_string(exec.threads));
  require(exec.simd != simd::Level::kAvx2 || simd::cpu_has_avx2(),
          "sparse optimizer: SIMD level avx2 requested but this CPU lacks AVX2/FMA/F16C");
}

void validate_step(const char* optimizer, Span<float> param, SparseGrad grad, const ParamState& state) {
  // Messages are built only on failure: a valid step must not allocate.
  const auto fail = [&](const std::string& detail) {
    throw std::invalid_argument(std::string(optimizer) + ": tensor '" + state.name + "': " + detail);
  };
  if (param.size() != state.numel) {
    fail("parameter has " + std::to_string(param.size()) + " entries but the state was made for " +
         std::to_string(state.numel));
  }
  if (grad.indices.size() != grad.values.size()) {
    fail(std::to_string(grad.indices.size()) + " indices but " + std::to_string(grad.values.size()) + " values");
  }
  if (state.step == std::numeric_limits<uint32_t>::max()) fail("step counter would overflow");
  const std::size_t bad = first_bad_index(grad.indices, state.numel);
  if (bad < grad.indices.size()) fail(index_error(grad.indices, bad, state.numel));
}

void for_each_slice(std::size_t n, const ExecutionOptions& exec,
                    const std::function<void(std::size_t begin, std::size_t end)>& run) {
  if (exec.threads <= 1 || n < exec.min_parallel_nnz || n < 2) {
    run(0, n);
    return;
  }
  const int threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(exec.threads), n));
  constexpr std::size_t kAlign = 16;
  const std::size_t per_thread = (n + threads - 1) / threads;
  const std::size_t slice = (per_thread + kAlign - 1) / kAlign * kAlign;
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, static_cast<std::size_t>(t) * slice);
    const std::size_t end = std::min(n, begin + slice);
    if (begin < end) run(begin, end);
  }
}

template <class Args>
void run_chunked(void (*kernel)(const Args&, Chunk), const Args& args, SparseGrad grad,
                 const ExecutionOptions& exec) {
  const uint32_t* indices = grad.indices.data();
  const float* values = grad.values.data();
  for_each_slice(grad.indices.size(), exec, [&](std::size_t begin, std::size_t end) {
    kernel(args, Chunk{indices + begin, values + begin, end - begin});
  });
}

template void run_chunked<SgdKernelArgs>(void (*)(const SgdKernelArgs&, Chunk), const SgdKernelArgs&, SparseGrad,
                                         const ExecutionOptions&);
template void run_chunked<AdamKernelArgs>(void (*)(const AdamKernelArgs&, Chunk), const AdamKernelArgs&, SparseGrad,
                                          const ExecutionOptions&);

}  // namespace st::optim::detail
