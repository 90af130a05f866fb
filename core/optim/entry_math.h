#pragma once
// Internal to st_optim: the update of a single entry, written once and used
// by both kernel builds (the AVX2 build for its scattered leftovers). The
// operation order is torch 1.13's (docs/optim.md); the kernel files are
// compiled with -ffp-contract=off so the compiler fuses no multiply-add and
// every build rounds identically.
//
// Everything here has internal linkage (anonymous namespace): the header is
// compiled once for the baseline and once with AVX2 flags, and shared inline
// functions would let the linker hand AVX2 code to the portable path.
#include <math.h>

#include <cstddef>
#include <cstdint>

#include "core/optim/kernels.h"

namespace st::optim::detail {
namespace {

// Exponent of the lazy decay for an entry last touched at `last_step` and
// touched again at `step`: the number of steps it missed. Never-touched
// entries (last_step == 0) hold zero state, so they need no decay.
inline uint32_t missed_steps(uint32_t last_step, uint32_t step) {
  return last_step == 0 ? 0 : step - last_step - 1;
}

// Software prefetch of the state the block 128 entries ahead will touch.
// The indices are known ahead but scattered (16-float blocks spread over the
// whole tensor), which the hardware prefetcher cannot predict; together
// with huge pages (core/util/huge_page_allocator.h) this halves a 5%-dense
// step on 25M entries (docs/benchmarks.md).
constexpr std::size_t kPrefetchAhead = 128;

inline void prefetch_state(const SgdKernelArgs& a, uint32_t i) {
  __builtin_prefetch(a.param + i, 1);
  if (a.momentum_buffer != nullptr) {
    __builtin_prefetch(a.momentum_buffer + i, 1);
    __builtin_prefetch(a.last_step + i, 1);
  }
}

inline void prefetch_state(const AdamKernelArgs& a, uint32_t i) {
  __builtin_prefetch(a.param + i, 1);
  __builtin_prefetch(a.exp_avg + i, 1);
  __builtin_prefetch(a.exp_avg_sq + i, 1);
  __builtin_prefetch(a.last_step + i, 1);
}

template <class Args>
inline void prefetch_ahead(const Args& args, const Chunk& chunk, std::size_t j) {
  if (j + kPrefetchAhead < chunk.count) prefetch_state(args, chunk.indices[j + kPrefetchAhead]);
}

inline float decay_factor(const DecayPowers& powers, uint32_t exponent) {
  if (exponent < DecayPowers::kTableSize) return powers.table[exponent];
  return static_cast<float>(pow(powers.base, static_cast<double>(exponent)));
}

// S(k) = base + ... + base^k (kernels.h); long gaps in closed form, in double.
inline float sum_of_powers(const PowerSums& sums, uint32_t k) {
  if (k < PowerSums::kTableSize) return sums.table[k];
  const double b = sums.base;
  if (b == 1.0) return static_cast<float>(k);
  return static_cast<float>(b * (1.0 - pow(b, static_cast<double>(k))) / (1.0 - b));
}

// Exact lazy momentum: the parameter after the k missed steps that dense
// momentum would have moved it by, in the units of the stored buffer.
inline float catch_up_param(const SgdKernelArgs& a, float p, float buf, uint32_t missed) {
  if (a.catch_up == nullptr || missed == 0) return p;
  return p + a.neg_lr * (buf * (a.catch_up_scale * sum_of_powers(*a.catch_up, missed)));
}

// torch: d_p = d_p.add(p, weight_decay), skipped when weight_decay == 0.
inline float add_weight_decay(float grad, float param, float weight_decay) {
  return weight_decay != 0.0f ? grad + weight_decay * param : grad;
}

inline void sgd_update_entry(const SgdKernelArgs& a, uint32_t i, float grad) {
  float p = a.param[i];
  if (a.momentum_buffer != nullptr) p = catch_up_param(a, p, a.momentum_buffer[i], missed_steps(a.last_step[i], a.step));
  float direction = add_weight_decay(grad, p, a.weight_decay);
  if (a.momentum_buffer != nullptr) {
    const uint32_t last = a.last_step[i];
    const float decayed = a.momentum_buffer[i] * decay_factor(*a.momentum_powers, missed_steps(last, a.step));
    // torch clones d_p into the buffer at the first step instead of damping.
    const float buf = last == 0 ? direction : a.momentum * decayed + a.damped_scale * direction;
    a.momentum_buffer[i] = buf;
    a.last_step[i] = a.step;
    direction = a.nesterov ? direction + a.momentum * buf : buf;
  }
  a.param[i] = p + a.neg_lr * direction;
}

inline void adam_update_entry(const AdamKernelArgs& a, uint32_t i, float grad) {
  const float p = a.param[i];
  const float g = add_weight_decay(grad, p, a.weight_decay);
  const uint32_t missed = missed_steps(a.last_step[i], a.step);
  const float m_decayed = a.exp_avg[i] * decay_factor(*a.beta1_powers, missed);
  const float v_decayed = a.exp_avg_sq[i] * decay_factor(*a.beta2_powers, missed);
  const float m = a.beta1 * m_decayed + a.one_minus_beta1 * g;      // mul_ then add_
  const float v = a.beta2 * v_decayed + a.one_minus_beta2 * g * g;  // addcmul_: (c*g)*g
  a.exp_avg[i] = m;
  a.exp_avg_sq[i] = v;
  a.last_step[i] = a.step;
  const float denom = sqrtf(v) / a.sqrt_bias_correction2 + a.eps;
  a.param[i] = p + a.neg_step_size * m / denom;  // addcdiv_: p + (s*m)/denom
}

// True when the 8 indices starting at `indices` are consecutive; the list is
// strictly increasing, so comparing the ends is enough.
inline bool is_run_of_8(const uint32_t* indices) { return indices[7] - indices[0] == 7; }

}  // namespace
}  // namespace st::optim::detail
