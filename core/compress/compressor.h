#pragma once
// The compressor interface (paper section 3.1): dense float gradient in,
// k (index, value) pairs out, into buffers the caller preallocated. Nothing
// is allocated on the hot path: every per-tensor buffer lives in the
// TensorState that make_state() allocated once.
//
// Non-finite input: every compressor rejects a gradient that holds NaN or
// +-Inf with NonFiniteGradient (naming the tensor, the first bad index and
// its value) before it changes any state, so the caller can skip or clip the
// step and lose nothing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/compress/sparse.h"
#include "core/simd/simd_level.h"
#include "core/util/span.h"

namespace st::compress {

class NonFiniteGradient : public std::runtime_error {
 public:
  NonFiniteGradient(const std::string& tensor, std::size_t index, float value);
  std::size_t index() const { return index_; }

 private:
  std::size_t index_;
};

// Per-tensor state (thresholds, scratch buffers, residuals). Owned by the
// caller, one per tensor, kept across iterations.
class TensorState {
 public:
  virtual ~TensorState() = default;
  std::string name;     // for error messages
  std::size_t numel = 0;
  std::size_t max_k = 0;
  // Diagnostics of the last compress() call.
  std::size_t last_threshold_count = 0;  // elements the threshold alone selected (threshold compressors)
  float last_threshold = 0.0f;
};

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual std::string name() const = 0;

  // Allocates everything compress() will need for a tensor of `numel`
  // elements and at most `max_k` selected elements.
  virtual std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                                  const std::string& tensor_name = "") const = 0;

  // Output capacity compress() needs for this (numel, k).
  virtual std::size_t max_output(std::size_t numel, std::size_t k) const;

  // Writes the selected pairs, indices strictly increasing, and returns their
  // count. `grad.size()` must equal state.numel and k <= the state's max_k;
  // out.capacity must be at least max_output(numel, k).
  virtual std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                               SparseBuffers out) = 0;
};

// k for a density in [0, 1]: round(density * numel), at least 1 when density > 0
// and numel > 0. Throws std::invalid_argument outside [0, 1].
std::size_t k_for_density(std::size_t numel, double density);

struct CompressorOptions {
  simd::Level simd = simd::default_level();
  uint64_t seed = 0;        // randomk
  float momentum = 0.0f;    // the "mc:" and "mcm:" decorators
  float clip_norm = 0.0f;   // the "clip:" decorator: a tensor's largest gradient L2 norm (> 0)
};

// Factory: "topk", "randomk", "thresholdv", "thresholdv16"; decorators as
// prefixes: "ef:" wraps the compressor in error feedback, "mc:" in
// momentum correction and "mcm:" in momentum correction with masking
// (options.momentum; e.g. "mc:ef:thresholdv16"), and "clip:" in local
// gradient clipping (options.clip_norm; e.g. "clip:ef:thresholdv16"). Throws
// std::invalid_argument naming the unknown compressor.
std::unique_ptr<Compressor> make_compressor(const std::string& name,
                                            const CompressorOptions& options = {});

}  // namespace st::compress
