#pragma once
// Internal to st_optim: the dense SGD loop, compiled once for the baseline
// (kernels_portable.cc) and once with AVX2 flags (kernels_avx2.cc), where
// the compiler vectorises it to 128- and 256-bit code. Internal linkage for
// the same reason as entry_math.h: the linker must not hand AVX2 code to
// the portable path. Both files are built with -ffp-contract=off, so no
// multiply-add is fused and both builds round identically.
//
// The float operations, in order, are sgd_update_entry()'s (entry_math.h)
// for an entry that missed no step: direction = grad (+ weight_decay x p);
// buf = direction at the first step, else momentum x buf + (1 - dampening)
// x direction; update = buf, or direction + momentum x buf for Nesterov;
// p = p + (-lr) x update. The sparse kernels multiply buf by a decay factor
// first, which is exactly 1.0f for an entry listed at every step (x * 1.0f
// is x, bit for bit), so the two agree bitwise on dense steps.
#include <cstddef>

#include "core/optim/kernels.h"

namespace st::optim::detail {
namespace {

template <bool kWeightDecay, bool kMomentum, bool kNesterov, bool kFirstStep>
void dense_sgd_loop(const DenseSgdKernelArgs& a) {
  float* __restrict p = a.param;
  float* __restrict buf = a.momentum_buffer;
  const float* __restrict grad = a.grad;
  // Scalars in locals: loads through `a` might alias the stores as far as
  // the compiler knows, which would stop vectorisation.
  const float neg_lr = a.neg_lr, weight_decay = a.weight_decay, momentum = a.momentum;
  const float damped_scale = a.damped_scale;
  const std::size_t count = a.count;
  for (std::size_t i = 0; i < count; ++i) {
    const float direction = kWeightDecay ? grad[i] + weight_decay * p[i] : grad[i];
    if constexpr (kMomentum) {
      const float new_buf = kFirstStep ? direction : momentum * buf[i] + damped_scale * direction;
      buf[i] = new_buf;
      const float update = kNesterov ? direction + momentum * new_buf : new_buf;
      p[i] = p[i] + neg_lr * update;
    } else {
      p[i] = p[i] + neg_lr * direction;
    }
  }
}

// Picks the instantiation with no branch left in its loop.
template <bool kWeightDecay>
void dense_sgd_dispatch_momentum(const DenseSgdKernelArgs& a) {
  if (a.momentum_buffer == nullptr) return dense_sgd_loop<kWeightDecay, false, false, false>(a);
  if (a.first_step) {
    return a.nesterov ? dense_sgd_loop<kWeightDecay, true, true, true>(a)
                      : dense_sgd_loop<kWeightDecay, true, false, true>(a);
  }
  return a.nesterov ? dense_sgd_loop<kWeightDecay, true, true, false>(a)
                    : dense_sgd_loop<kWeightDecay, true, false, false>(a);
}

inline void dense_sgd(const DenseSgdKernelArgs& a) {
  if (a.weight_decay != 0.0f) return dense_sgd_dispatch_momentum<true>(a);
  dense_sgd_dispatch_momentum<false>(a);
}

}  // namespace
}  // namespace st::optim::detail
