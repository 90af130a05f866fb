#pragma once
// Sparse optimizers on a float32 CPU master copy (paper section 3.2).
// step() touches only the listed indices; entries that were not listed keep
// their value and their optimizer state decays lazily when next touched.
// The exact semantics are documented in docs/optim.md.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/simd/simd_level.h"
#include "core/util/huge_page_allocator.h"
#include "core/util/span.h"

namespace st::optim {

// A sparse gradient: indices strictly increasing, all < numel.
struct SparseGrad {
  Span<const uint32_t> indices;
  Span<const float> values;
};

// Per-tensor optimizer state (momentum, moments, last-touched step).
class ParamState {
 public:
  virtual ~ParamState() = default;
  std::string name;
  std::size_t numel = 0;
  uint32_t step = 0;  // number of step() calls so far on this tensor
};

// State of the sparse SGD optimizer. Both vectors are empty when momentum is
// 0 (plain SGD needs no per-entry state).
class SgdState : public ParamState {
 public:
  LargeVector<float> momentum_buffer;  // numel entries, 0 until first touch
  LargeVector<uint32_t> last_step;     // step of the last touch, 0 = never
};

// State of the sparse Adam optimizer.
class AdamState : public ParamState {
 public:
  LargeVector<float> exp_avg;           // first moment, numel entries
  LargeVector<float> exp_avg_sq;        // second moment, numel entries
  LargeVector<uint32_t> last_step;     // step of the last touch, 0 = never
};

class SparseOptimizer {
 public:
  virtual ~SparseOptimizer() = default;
  virtual std::string name() const = 0;
  virtual std::unique_ptr<ParamState> make_state(std::size_t numel,
                                                 const std::string& tensor_name = "") const = 0;
  // Applies one step. Throws std::invalid_argument (naming the tensor and
  // position) when an index is out of range or not strictly increasing, or
  // when sizes disagree or the state is not this optimizer's; nothing is
  // modified in that case.
  virtual void step(Span<float> param, SparseGrad grad, ParamState& state) = 0;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

struct ExecutionOptions {
  simd::Level simd = simd::default_level();
  int threads = 1;                       // OpenMP threads for large steps
  std::size_t min_parallel_nnz = 1 << 16;  // below this, one thread
};

// The factories check the options as torch::optim does (lr, momentum,
// weight_decay, eps >= 0; betas in [0, 1); nesterov needs momentum > 0 and
// dampening == 0), plus threads >= 1 and AVX2 only on a CPU that has it;
// violations throw std::invalid_argument.
std::unique_ptr<SparseOptimizer> make_sparse_sgd(const SgdOptions& options,
                                                 const ExecutionOptions& exec = {});
std::unique_ptr<SparseOptimizer> make_sparse_adam(const AdamOptions& options,
                                                  const ExecutionOptions& exec = {});

}  // namespace st::optim
