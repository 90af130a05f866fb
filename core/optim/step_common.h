#pragma once
// Internal to st_optim: what SparseSgd and SparseAdam share around their
// kernels: option checks, validation of a step's input before anything is
// written, and the split of a step into per-thread chunks.
#include <cstddef>
#include <functional>
#include <string>

#include "core/optim/kernels.h"
#include "core/optim/sparse_optimizer.h"

namespace st::optim::detail {

// Throws std::invalid_argument for threads < 1 or AVX2 on a CPU without it.
void check_execution_options(const ExecutionOptions& exec);

// The same checks as torch::optim::SGD's constructor; messages start with
// `optimizer`. Throws std::invalid_argument.
void check_sgd_options(const char* optimizer, const SgdOptions& options);

// Throws std::invalid_argument(message) when `condition` is false.
void require(bool condition, const std::string& message);

// Validates a step before it modifies anything: param.size() == state.numel,
// as many values as indices, indices strictly increasing and < numel, and a
// step counter that can still be incremented. Messages name the optimizer,
// the tensor and the offending position.
void validate_step(const char* optimizer, Span<float> param, SparseGrad grad, const ParamState& state);

// True when every index < numel fits the signed 32-bit offsets of AVX2
// gathers.
inline bool fits_gather(std::size_t numel) { return numel <= (std::size_t{1} << 31); }

// Calls run(begin, end) over [0, n): once on the calling thread when n <
// exec.min_parallel_nnz, n < 2 or exec.threads is 1, otherwise once per
// OpenMP thread with contiguous slices that start on multiples of 16
// elements (64-byte lines; compressor runs stay in one piece). The slices
// depend on n and the thread count only.
void for_each_slice(std::size_t n, const ExecutionOptions& exec,
                    const std::function<void(std::size_t begin, std::size_t end)>& run);

// Runs kernel(args, chunk) over the whole gradient: on the calling thread
// when there are fewer than exec.min_parallel_nnz entries or one thread,
// otherwise on exec.threads OpenMP threads, each with its own contiguous
// slice of the index list. Every index lies in exactly one slice and each
// entry's update reads only that entry, so the result does not depend on
// the thread count.
template <class Args>
void run_chunked(void (*kernel)(const Args&, Chunk), const Args& args, SparseGrad grad,
                 const ExecutionOptions& exec);

}  // namespace st::optim::detail
