// AVX2 update kernels (this file alone is compiled with ST_AVX2_FLAGS and is
// called only when the CPU has AVX2). Blocks of 8 indices are processed in
// one 256-bit vector: a block of consecutive indices (compressors emit runs
// of 16) uses plain loads and stores, any other block gathers its operands
// and stores lane by lane. No FMA intrinsics are used: a separate multiply
// and add round exactly like the portable kernels, which keeps the two
// builds bit-identical (torch's own vector kernels do fuse add-with-alpha;
// docs/optim.md gives the resulting differences).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "core/optim/dense_kernel.h"
#include "core/optim/entry_math.h"
#include "core/optim/kernels.h"

namespace st::optim::detail {
namespace {

constexpr std::size_t kLanes = 8;

// Addressing of the 8 entries of one block.
template <bool kContiguous>
class Lanes;

template <>
class Lanes<true> {
 public:
  explicit Lanes(const uint32_t* indices) : first_(indices[0]) {}
  __m256 load(const float* base) const { return _mm256_loadu_ps(base + first_); }
  __m256i load(const uint32_t* base) const {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + first_));
  }
  void store(float* base, __m256 value) const { _mm256_storeu_ps(base + first_, value); }
  void fill(uint32_t* base, uint32_t value) const {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(base + first_), _mm256_set1_epi32(static_cast<int>(value)));
  }

 private:
  uint32_t first_;
};

// Scattered entries: gathers for loads (indices < 2^31 is checked by the
// caller), scalar stores because AVX2 has no scatter.
template <>
class Lanes<false> {
 public:
  explicit Lanes(const uint32_t* indices)
      : indices_(indices), offsets_(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(indices))) {}
  __m256 load(const float* base) const { return _mm256_i32gather_ps(base, offsets_, 4); }
  __m256i load(const uint32_t* base) const {
    return _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), offsets_, 4);
  }
  void store(float* base, __m256 value) const {
    alignas(32) float lanes[kLanes];
    _mm256_store_ps(lanes, value);
    for (std::size_t k = 0; k < kLanes; ++k) base[indices_[k]] = lanes[k];
  }
  void fill(uint32_t* base, uint32_t value) const {
    for (std::size_t k = 0; k < kLanes; ++k) base[indices_[k]] = value;
  }

 private:
  const uint32_t* indices_;
  __m256i offsets_;
};

__m256 splat(float value) { return _mm256_set1_ps(value); }

__m256 add_weight_decay(__m256 grad, __m256 param, float weight_decay) {
  if (weight_decay == 0.0f) return grad;
  return _mm256_add_ps(grad, _mm256_mul_ps(splat(weight_decay), param));
}

// Vector form of missed_steps(); *never_touched gets the lanes whose
// last_step is 0.
__m256i missed_steps8(__m256i last_step, uint32_t step, __m256i* never_touched) {
  *never_touched = _mm256_cmpeq_epi32(last_step, _mm256_setzero_si256());
  const __m256i gap_minus_one = _mm256_sub_epi32(_mm256_set1_epi32(static_cast<int>(step - 1)), last_step);
  return _mm256_andnot_si256(*never_touched, gap_minus_one);
}

// powers(missed) per lane. Dense steps miss nothing (factor exactly 1);
// small gaps come from the table; long gaps fall back to the scalar path.
__m256 decay_factors(__m256i missed, const DecayPowers& powers) {
  if (_mm256_testz_si256(missed, missed)) return splat(1.0f);
  const __m256i largest = _mm256_set1_epi32(DecayPowers::kTableSize - 1);
  const __m256i in_table = _mm256_cmpeq_epi32(_mm256_min_epu32(missed, largest), missed);
  if (_mm256_movemask_epi8(in_table) == -1) return _mm256_i32gather_ps(powers.table, missed, 4);
  alignas(32) uint32_t exponents[kLanes];
  alignas(32) float factors[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(exponents), missed);
  for (std::size_t k = 0; k < kLanes; ++k) factors[k] = decay_factor(powers, exponents[k]);
  return _mm256_load_ps(factors);
}

template <bool kContiguous>
void sgd_block_no_momentum(const SgdKernelArgs& a, const uint32_t* indices, const float* grads) {
  const Lanes<kContiguous> lanes(indices);
  const __m256 p = lanes.load(a.param);
  const __m256 direction = add_weight_decay(_mm256_loadu_ps(grads), p, a.weight_decay);
  lanes.store(a.param, _mm256_add_ps(p, _mm256_mul_ps(splat(a.neg_lr), direction)));
}

// Exact lazy momentum, per lane as catch_up_param() in entry_math.h: the
// parameter moved by lr x buf x scale x S(missed). Lanes that missed nothing
// (never touched ones included) keep p bit for bit.
__m256 catch_up8(const SgdKernelArgs& a, __m256 p, __m256 buf, __m256i missed) {
  if (a.catch_up == nullptr || _mm256_testz_si256(missed, missed)) return p;
  alignas(32) uint32_t gaps[kLanes];
  alignas(32) float sums[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(gaps), missed);
  for (std::size_t k = 0; k < kLanes; ++k) sums[k] = a.catch_up_scale * sum_of_powers(*a.catch_up, gaps[k]);
  const __m256 moved = _mm256_add_ps(p, _mm256_mul_ps(splat(a.neg_lr), _mm256_mul_ps(buf, _mm256_load_ps(sums))));
  const __m256 missed_any = _mm256_castsi256_ps(_mm256_xor_si256(_mm256_cmpeq_epi32(missed, _mm256_setzero_si256()),
                                                                 _mm256_set1_epi32(-1)));
  return _mm256_blendv_ps(p, moved, missed_any);
}

template <bool kContiguous>
void sgd_block_momentum(const SgdKernelArgs& a, const uint32_t* indices, const float* grads) {
  const Lanes<kContiguous> lanes(indices);
  __m256i never_touched;
  const __m256i missed = missed_steps8(lanes.load(a.last_step), a.step, &never_touched);
  const __m256 old_buf = lanes.load(a.momentum_buffer);
  const __m256 p = catch_up8(a, lanes.load(a.param), old_buf, missed);
  const __m256 direction = add_weight_decay(_mm256_loadu_ps(grads), p, a.weight_decay);
  const __m256 decayed = _mm256_mul_ps(old_buf, decay_factors(missed, *a.momentum_powers));
  const __m256 momentum = splat(a.momentum);
  const __m256 damped =
      _mm256_add_ps(_mm256_mul_ps(momentum, decayed), _mm256_mul_ps(splat(a.damped_scale), direction));
  // First touch: the buffer starts as a copy of the direction (torch's clone).
  const __m256 buf = _mm256_blendv_ps(damped, direction, _mm256_castsi256_ps(never_touched));
  const __m256 update = a.nesterov ? _mm256_add_ps(direction, _mm256_mul_ps(momentum, buf)) : buf;
  lanes.store(a.momentum_buffer, buf);
  lanes.fill(a.last_step, a.step);
  lanes.store(a.param, _mm256_add_ps(p, _mm256_mul_ps(splat(a.neg_lr), update)));
}

template <bool kContiguous>
void adam_block(const AdamKernelArgs& a, const uint32_t* indices, const float* grads) {
  const Lanes<kContiguous> lanes(indices);
  const __m256 p = lanes.load(a.param);
  const __m256 g = add_weight_decay(_mm256_loadu_ps(grads), p, a.weight_decay);
  __m256i never_touched;
  const __m256i missed = missed_steps8(lanes.load(a.last_step), a.step, &never_touched);
  const __m256 m_decayed = _mm256_mul_ps(lanes.load(a.exp_avg), decay_factors(missed, *a.beta1_powers));
  const __m256 v_decayed = _mm256_mul_ps(lanes.load(a.exp_avg_sq), decay_factors(missed, *a.beta2_powers));
  const __m256 m = _mm256_add_ps(_mm256_mul_ps(splat(a.beta1), m_decayed), _mm256_mul_ps(splat(a.one_minus_beta1), g));
  const __m256 scaled_g = _mm256_mul_ps(splat(a.one_minus_beta2), g);
  const __m256 v = _mm256_add_ps(_mm256_mul_ps(splat(a.beta2), v_decayed), _mm256_mul_ps(scaled_g, g));
  const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(v), splat(a.sqrt_bias_correction2)), splat(a.eps));
  const __m256 step = _mm256_div_ps(_mm256_mul_ps(splat(a.neg_step_size), m), denom);
  lanes.store(a.exp_avg, m);
  lanes.store(a.exp_avg_sq, v);
  lanes.fill(a.last_step, a.step);
  lanes.store(a.param, _mm256_add_ps(p, step));
}

// Walks the chunk in blocks of 8: contiguous blocks, gathered blocks (when
// the offsets fit a 32-bit gather) or entry by entry; the tail entry by entry.
template <class Args, class ContiguousFn, class GatheredFn, class EntryFn>
void walk_chunk(const Args& args, Chunk chunk, ContiguousFn contiguous, GatheredFn gathered, EntryFn entry) {
  std::size_t j = 0;
  for (; j + kLanes <= chunk.count; j += kLanes) {
    const uint32_t* indices = chunk.indices + j;
    prefetch_ahead(args, chunk, j);
    if (is_run_of_8(indices)) {
      contiguous(args, indices, chunk.values + j);
    } else if (args.gather_ok) {
      gathered(args, indices, chunk.values + j);
    } else {
      for (std::size_t k = 0; k < kLanes; ++k) entry(args, indices[k], chunk.values[j + k]);
    }
  }
  for (; j < chunk.count; ++j) entry(args, chunk.indices[j], chunk.values[j]);
}

}  // namespace

void sgd_kernel_avx2(const SgdKernelArgs& args, Chunk chunk) {
  if (args.momentum_buffer == nullptr) {
    walk_chunk(args, chunk, sgd_block_no_momentum<true>, sgd_block_no_momentum<false>, sgd_update_entry);
  } else {
    walk_chunk(args, chunk, sgd_block_momentum<true>, sgd_block_momentum<false>, sgd_update_entry);
  }
}

void dense_sgd_kernel_avx2(const DenseSgdKernelArgs& args) { dense_sgd(args); }

void adam_kernel_avx2(const AdamKernelArgs& args, Chunk chunk) {
  walk_chunk(args, chunk, adam_block<true>, adam_block<false>, adam_update_entry);
}

}  // namespace st::optim::detail
