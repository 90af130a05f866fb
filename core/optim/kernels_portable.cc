// Portable (x86-64 baseline) update kernels. Runs of 8 consecutive indices
// go through plain loops over contiguous memory that the compiler turns into
// SSE code; everything else is updated entry by entry.
#include <cstddef>
#include <cstdint>

#include "core/optim/dense_kernel.h"
#include "core/optim/entry_math.h"
#include "core/optim/kernels.h"

namespace st::optim::detail {
namespace {

constexpr std::size_t kRun = 8;

// Decay factors of one run, looked up first so that the arithmetic loop
// below has no table access and vectorises.
void run_decay_factors(const uint32_t* last_step, uint32_t step, const DecayPowers& powers,
                       float* factors) {
  for (std::size_t k = 0; k < kRun; ++k) factors[k] = decay_factor(powers, missed_steps(last_step[k], step));
}

// The option flags are template parameters so that the loops below have no
// branches left and vectorise.
template <bool kWeightDecay>
float direction_of(float grad, float param, float weight_decay) {
  return kWeightDecay ? grad + weight_decay * param : grad;
}

template <bool kWeightDecay>
void sgd_run_no_momentum(const SgdKernelArgs& a, uint32_t first, const float* __restrict grads) {
  float* __restrict p = a.param + first;
  const float weight_decay = a.weight_decay, neg_lr = a.neg_lr;
  for (std::size_t k = 0; k < kRun; ++k) {
    p[k] = p[k] + neg_lr * direction_of<kWeightDecay>(grads[k], p[k], weight_decay);
  }
}

// Exact lazy momentum: moves the run's parameters by what dense momentum
// would have moved them over their missed steps (entry_math.h).
void catch_up_run(const SgdKernelArgs& a, float* __restrict p, const float* __restrict buf, const uint32_t* last) {
  for (std::size_t k = 0; k < kRun; ++k) p[k] = catch_up_param(a, p[k], buf[k], missed_steps(last[k], a.step));
}

template <bool kWeightDecay, bool kNesterov>
void sgd_run_momentum(const SgdKernelArgs& a, uint32_t first, const float* __restrict grads) {
  float* __restrict p = a.param + first;
  float* __restrict buf = a.momentum_buffer + first;
  uint32_t* __restrict last = a.last_step + first;
  if (a.catch_up != nullptr) catch_up_run(a, p, buf, last);
  float factors[kRun];
  run_decay_factors(last, a.step, *a.momentum_powers, factors);
  // Scalars in locals: loads through `a` inside the loop might alias the
  // stores as far as the compiler knows, which stops vectorisation.
  const float weight_decay = a.weight_decay, momentum = a.momentum, damped_scale = a.damped_scale;
  const float neg_lr = a.neg_lr;
  const uint32_t step = a.step;
  for (std::size_t k = 0; k < kRun; ++k) {
    const float direction = direction_of<kWeightDecay>(grads[k], p[k], weight_decay);
    const float damped = momentum * (buf[k] * factors[k]) + damped_scale * direction;
    // First touch: the buffer starts as a copy of the direction (torch's clone).
    const float new_buf = last[k] == 0 ? direction : damped;
    const float update = kNesterov ? direction + momentum * new_buf : new_buf;
    buf[k] = new_buf;
    last[k] = step;
    p[k] = p[k] + neg_lr * update;
  }
}

template <bool kWeightDecay>
void adam_run(const AdamKernelArgs& a, uint32_t first, const float* __restrict grads) {
  float* __restrict p = a.param + first;
  float* __restrict m = a.exp_avg + first;
  float* __restrict v = a.exp_avg_sq + first;
  uint32_t* __restrict last = a.last_step + first;
  float factors1[kRun];
  float factors2[kRun];
  run_decay_factors(last, a.step, *a.beta1_powers, factors1);
  run_decay_factors(last, a.step, *a.beta2_powers, factors2);
  const float weight_decay = a.weight_decay, beta1 = a.beta1, one_minus_beta1 = a.one_minus_beta1;
  const float beta2 = a.beta2, one_minus_beta2 = a.one_minus_beta2, eps = a.eps;
  const float sqrt_bias_correction2 = a.sqrt_bias_correction2, neg_step_size = a.neg_step_size;
  const uint32_t step = a.step;
  for (std::size_t k = 0; k < kRun; ++k) {
    const float g = direction_of<kWeightDecay>(grads[k], p[k], weight_decay);
    const float new_m = beta1 * (m[k] * factors1[k]) + one_minus_beta1 * g;
    const float new_v = beta2 * (v[k] * factors2[k]) + one_minus_beta2 * g * g;
    const float denom = sqrtf(new_v) / sqrt_bias_correction2 + eps;
    m[k] = new_m;
    v[k] = new_v;
    last[k] = step;
    p[k] = p[k] + neg_step_size * new_m / denom;
  }
}

// Walks the chunk in blocks of 8 indices: contiguous blocks go to `run`,
// the others and the tail to `entry`.
template <class Args, class RunFn, class EntryFn>
void walk_chunk(const Args& args, Chunk chunk, RunFn run, EntryFn entry) {
  std::size_t j = 0;
  for (; j + kRun <= chunk.count; j += kRun) {
    prefetch_ahead(args, chunk, j);
    if (is_run_of_8(chunk.indices + j)) {
      run(args, chunk.indices[j], chunk.values + j);
    } else {
      for (std::size_t k = j; k < j + kRun; ++k) entry(args, chunk.indices[k], chunk.values[k]);
    }
  }
  for (; j < chunk.count; ++j) entry(args, chunk.indices[j], chunk.values[j]);
}

}  // namespace

void sgd_kernel_portable(const SgdKernelArgs& args, Chunk chunk) {
  const bool decay = args.weight_decay != 0.0f;
  if (args.momentum_buffer == nullptr) {
    walk_chunk(args, chunk, decay ? sgd_run_no_momentum<true> : sgd_run_no_momentum<false>, sgd_update_entry);
  } else if (args.nesterov) {
    walk_chunk(args, chunk, decay ? sgd_run_momentum<true, true> : sgd_run_momentum<false, true>, sgd_update_entry);
  } else {
    walk_chunk(args, chunk, decay ? sgd_run_momentum<true, false> : sgd_run_momentum<false, false>,
               sgd_update_entry);
  }
}

void dense_sgd_kernel_portable(const DenseSgdKernelArgs& args) { dense_sgd(args); }

void adam_kernel_portable(const AdamKernelArgs& args, Chunk chunk) {
  const bool decay = args.weight_decay != 0.0f;
  walk_chunk(args, chunk, decay ? adam_run<true> : adam_run<false>, adam_update_entry);
}

}  // namespace st::optim::detail
