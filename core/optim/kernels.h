#pragma once
// Internal to st_optim: the update kernels behind SparseSgd and SparseAdam.
// Each kernel updates one chunk of a sparse gradient (a slice of the index
// list); chunks of one step never share an index, so threads can run them
// side by side. The portable build (kernels_portable.cc) and the AVX2 build
// (kernels_avx2.cc) perform the same float operations in the same order
// without fused multiply-add, so they give bit-identical results.
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace st::optim::detail {

// base^k rounded to float, tabulated for the small exponents that dense or
// nearly dense training produces; decay_factor() in entry_math.h falls back
// to std::pow for the rare long gaps. Plain data on purpose: inline member
// functions used by both kernel builds would be emitted twice, once with
// AVX2 code, and the linker may keep either copy (see entry_math.h).
struct DecayPowers {
  static constexpr uint32_t kTableSize = 64;

  DecayPowers() = default;
  explicit DecayPowers(double base_value) : base(base_value) {
    for (uint32_t k = 0; k < kTableSize; ++k) table[k] = static_cast<float>(std::pow(base, static_cast<double>(k)));
  }

  double base = 1.0;
  float table[kTableSize] = {};
};

// S(k) = base + base^2 + ... + base^k rounded to float: the distance, in
// units of lr x buf, that dense momentum moves an entry over k steps with a
// zero gradient (exact lazy momentum, weight prediction). Tabulated like
// DecayPowers; sum_of_powers() in entry_math.h computes longer gaps.
struct PowerSums {
  static constexpr uint32_t kTableSize = 64;

  PowerSums() = default;
  explicit PowerSums(double base_value) : base(base_value) {
    double power = 1.0, sum = 0.0;
    for (uint32_t k = 0; k < kTableSize; ++k) {
      table[k] = static_cast<float>(sum);
      power *= base;
      sum += power;
    }
  }

  double base = 1.0;
  float table[kTableSize] = {};
};

// The slice of a sparse gradient one kernel call handles.
struct Chunk {
  const uint32_t* indices = nullptr;
  const float* values = nullptr;
  std::size_t count = 0;
};

// Everything an SGD kernel needs; scalars are already rounded to float the
// way torch rounds its Scalar arguments.
struct SgdKernelArgs {
  float* param = nullptr;
  float* momentum_buffer = nullptr;  // null when momentum == 0
  uint32_t* last_step = nullptr;     // null when momentum == 0
  uint32_t step = 0;                 // number of the step being applied (>= 1)
  bool gather_ok = true;             // every index fits a signed 32-bit gather offset
  float neg_lr = 0.0f;               // -lr
  float weight_decay = 0.0f;
  float momentum = 0.0f;
  float damped_scale = 1.0f;         // 1 - dampening
  bool nesterov = false;
  const DecayPowers* momentum_powers = nullptr;
  // Exact lazy momentum: catch-up distances S(k) for the k missed steps
  // (scaled by momentum for Nesterov); null for the decay-only rule.
  const PowerSums* catch_up = nullptr;
  float catch_up_scale = 1.0f;  // momentum for Nesterov, else 1
};

struct AdamKernelArgs {
  float* param = nullptr;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  uint32_t* last_step = nullptr;
  uint32_t step = 0;
  bool gather_ok = true;
  float weight_decay = 0.0f;
  float beta1 = 0.0f;
  float one_minus_beta1 = 0.0f;
  float beta2 = 0.0f;
  float one_minus_beta2 = 0.0f;
  float eps = 0.0f;
  float neg_step_size = 0.0f;          // -lr / (1 - beta1^t)
  float sqrt_bias_correction2 = 1.0f;  // sqrt(1 - beta2^t)
  const DecayPowers* beta1_powers = nullptr;
  const DecayPowers* beta2_powers = nullptr;
};

// Everything the dense SGD kernel needs (DenseSgd, dense_sgd.h): one slice
// [0, count) of a contiguous tensor, every entry updated.
struct DenseSgdKernelArgs {
  float* param = nullptr;
  float* momentum_buffer = nullptr;  // null when momentum == 0
  const float* grad = nullptr;
  std::size_t count = 0;
  bool first_step = false;  // the buffer starts as a copy of the direction
  float neg_lr = 0.0f;
  float weight_decay = 0.0f;
  float momentum = 0.0f;
  float damped_scale = 1.0f;
  bool nesterov = false;
};

using SgdKernel = void (*)(const SgdKernelArgs&, Chunk);
using AdamKernel = void (*)(const AdamKernelArgs&, Chunk);

void sgd_kernel_portable(const SgdKernelArgs& args, Chunk chunk);
void sgd_kernel_avx2(const SgdKernelArgs& args, Chunk chunk);
void dense_sgd_kernel_portable(const DenseSgdKernelArgs& args);
void dense_sgd_kernel_avx2(const DenseSgdKernelArgs& args);
void adam_kernel_portable(const AdamKernelArgs& args, Chunk chunk);
void adam_kernel_avx2(const AdamKernelArgs& args, Chunk chunk);

}  // namespace st::optim::detail
