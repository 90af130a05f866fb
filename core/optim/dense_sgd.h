#pragma once
// Dense SGD with momentum (torch.optim.SGD's step) over a contiguous tensor:
// every entry, every step. The dense systems (ddp and its variants, and the
// local-step systems: core/train/systems/sync/sync_system.h, local_step_system.h) step
// their master with it.
//
// Its results are bit for bit those of SparseSgd::step() with every index
// 0..numel-1 listed at every step, which is how those systems stepped
// before: an entry that never misses a step has a decay factor of exactly
// 1.0f and no catch-up, so the sparse kernels perform the same float
// operations in the same order (core/optim/dense_kernel.h). The dense loop
// needs no index list, no last-step array and no per-block run checks, so
// it moves 20 bytes per entry (parameter and buffer read and written, the
// gradient read) where the sparse step also reads the index and reads and
// writes the last step (32 bytes); docs/benchmarks.md ("Dense SGD step")
// has the measured ratio. tests/optim_dense_test.cc checks
// the equality for every option and both SIMD builds.
#include <cstddef>
#include <memory>
#include <string>

#include "core/optim/sparse_optimizer.h"

namespace st::optim {

// Per-tensor state: the momentum buffer (empty when momentum is 0) and,
// from ParamState, the step counter and the learning-rate scale.
class DenseSgdState : public ParamState {
 public:
  LargeVector<float> momentum_buffer;
};

class DenseSgd {
 public:
  // Options are checked as make_sparse_sgd() checks them (options.lazy does
  // not apply: no entry ever misses a step). Throws std::invalid_argument.
  explicit DenseSgd(const SgdOptions& options, const ExecutionOptions& exec = {});

  std::unique_ptr<DenseSgdState> make_state(std::size_t numel, const std::string& tensor_name = "") const;

  // One step of every entry of `param` with `grad` (same size). Throws
  // std::invalid_argument, naming the tensor, when sizes disagree with the
  // state or the step counter would overflow; nothing is modified then.
  void step(Span<float> param, Span<const float> grad, DenseSgdState& state) const;

  const SgdOptions& options() const { return options_; }

 private:
  SgdOptions options_;
  ExecutionOptions exec_;
};

}  // namespace st::optim
