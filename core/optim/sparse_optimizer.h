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
  // Multiplies the optimizer's learning rate for this tensor's next steps
  // (a schedule such as warmup sets it before stepping; the product is
  // formed in double and rounded once, as torch rounds a scheduled lr).
  double lr_scale = 1.0;
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

  // Writes to `out` the parameter as a reader should see it: the stored
  // values plus the movement that momentum alone would add over the steps
  // the lazy update has deferred (exact lazy momentum) and over `ahead`
  // further steps with a zero gradient (weight prediction for a stale
  // forward). The default, for optimizers without such a notion, copies
  // `param`. `out` may not alias `param`.
  virtual void extrapolate(Span<const float> param, const ParamState& state, uint32_t ahead, Span<float> out) const;
};

// What happens to the momentum of an entry that a sparse step does not list
// (docs/optim.md, "Lazy momentum").
enum class LazyMomentum {
  // The paper's rule: the buffer decays by momentum^k over k missed steps,
  // the parameter does not move meanwhile.
  kDecay,
  // Dense momentum, deferred: when the entry is next listed, the movement
  // lr x buf x (m + m^2 + ... + m^k) that dense SGD would have made over the
  // k missed steps is applied first, so the touched entries equal dense SGD
  // with momentum fed the same sparse gradients (weight decay of untouched
  // entries excepted). extrapolate() shows the deferred movement to readers.
  kExact,
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
  double weight_decay = 0.0;
  LazyMomentum lazy = LazyMomentum::kDecay;
};

// "decay" or "exact"; the parser throws std::invalid_argument naming the
// accepted words.
const char* lazy_momentum_name(LazyMomentum lazy);
LazyMomentum parse_lazy_momentum(const std::string& text);

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
