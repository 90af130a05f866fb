#pragma once
// The concrete compressors. Use make_compressor() unless a test needs the
// type itself.
#include <cstdint>
#include <memory>
#include <string>

#include "core/compress/compressor.h"
#include "core/compress/kernels.h"

namespace st::compress {

// Exactly the k largest |g|; ties go to the lower index (see top_select.h).
class TopK final : public Compressor {
 public:
  explicit TopK(simd::Level simd);
  std::string name() const override { return "topk"; }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

 private:
  const Kernels& kernels_;
};

// k indices uniform without replacement from a per-tensor generator seeded
// with `seed`: the same seed gives the same sequence of selections.
class RandomK final : public Compressor {
 public:
  RandomK(simd::Level simd, uint64_t seed);
  std::string name() const override { return "randomk"; }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

 private:
  const Kernels& kernels_;
  uint64_t seed_;
};

// Elements with |g| >= a per-tensor threshold, at most k (the largest k when
// more pass). The threshold is kept across iterations as a multiple of a
// scale measured on a fixed strided sample of the gradient, so a gradient
// whose scale drifts keeps its count; the first threshold is a sample
// quantile. The count can fall short of k (no top-up).
class ThresholdV final : public Compressor {
 public:
  explicit ThresholdV(simd::Level simd);
  std::string name() const override { return "thresholdv"; }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

 private:
  const Kernels& kernels_;
};

// Cache-aware block selection: whole blocks of 16 contiguous floats (one
// 64-byte line) ranked by the sum of |g| over the block. Exactly
// B = ceil(k/16) blocks are written (the last block of the tensor may be
// shorter), so the count lies in [k-15, k+15]. The per-tensor threshold,
// kept relative to the gradient's L1 norm, predicts the B-th largest block
// sum; one filter pass at that threshold usually yields the candidates, and
// the trim/top-up to exactly B blocks is exact (best B blocks, ties to the
// lower index), scanning the whole tensor with no early exit.
class ThresholdV16 final : public Compressor {
 public:
  explicit ThresholdV16(simd::Level simd);
  std::string name() const override { return "thresholdv16"; }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t max_output(std::size_t numel, std::size_t k) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

 private:
  const Kernels& kernels_;
};

// What every decorator (a compressor around another: error feedback,
// momentum correction, clipping) shares: the inner compressor, its output
// size, and a per-tensor state that holds the inner compressor's state and
// passes its diagnostics on.
struct DecoratedState : TensorState {
  explicit DecoratedState(std::unique_ptr<TensorState> inner_state) : inner(std::move(inner_state)) {}
  std::unique_ptr<TensorState> inner;
  // Copies the inner compressor's diagnostics of the last call.
  void take_inner_diagnostics() {
    last_threshold = inner->last_threshold;
    last_threshold_count = inner->last_threshold_count;
  }
};

class CompressorDecorator : public Compressor {
 public:
  std::size_t max_output(std::size_t numel, std::size_t k) const override { return inner_->max_output(numel, k); }

 protected:
  explicit CompressorDecorator(std::unique_ptr<Compressor> inner) : inner_(std::move(inner)) {}
  // A state of the decorator's type S, built from the inner compressor's
  // state and the tensor's size, with its name and sizes set.
  template <class S>
  std::unique_ptr<TensorState> make_decorated_state(std::size_t numel, std::size_t max_k,
                                                    const std::string& tensor_name) const {
    auto state = std::make_unique<S>(inner_->make_state(numel, max_k, tensor_name), numel);
    state->name = tensor_name;
    state->numel = numel;
    state->max_k = max_k;
    return state;
  }

  std::unique_ptr<Compressor> inner_;
};

// Error feedback around any compressor: it compresses acc = g + r and keeps
// r <- acc - sent per tensor, so nothing a step leaves out is lost. On an
// error (e.g. a non-finite gradient) the residual is left unchanged.
class ErrorFeedback final : public CompressorDecorator {
 public:
  ErrorFeedback(std::unique_ptr<Compressor> inner, simd::Level simd);
  std::string name() const override { return "ef:" + inner_->name(); }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

  // The residual kept for a tensor (for tests and checkpoints).
  static Span<const float> residual(const TensorState& state);

 private:
  const Kernels& kernels_;
};

// Momentum correction (Deep Gradient Compression, Lin et al., ICLR 2018)
// around any compressor: each tensor keeps a dense velocity u <- m u + g of
// the node's own gradient, and u is what the inner compressor (usually
// error feedback around a selector) sees; with masking, the velocity of
// the entries sent is zeroed (DGC's momentum factor masking). The master
// then applies plain SGD to what arrives.
class MomentumCorrection final : public CompressorDecorator {
 public:
  MomentumCorrection(std::unique_ptr<Compressor> inner, float momentum, bool masking);
  std::string name() const override { return (masking_ ? "mcm:" : "mc:") + inner_->name(); }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

  // The velocity kept for a tensor (for tests).
  static Span<const float> velocity(const TensorState& state);

 private:
  float momentum_;
  bool masking_;
};

// Local gradient clipping (Deep Gradient Compression, Lin et al., ICLR
// 2018) around any compressor: a tensor's gradient whose L2 norm exceeds
// `max_norm` is scaled down to it before the inner compressor (error
// feedback, momentum correction) adds it to what it keeps, so one large
// step cannot grow the residual a sparse exchange releases later. DGC
// clips the node's whole gradient; this clips each tensor on its own,
// because a node compresses a layer as soon as its backward produces it
// (the per-layer pipeline) and cannot wait for the whole gradient's norm.
class GradientClipping final : public CompressorDecorator {
 public:
  GradientClipping(std::unique_ptr<Compressor> inner, float max_norm);
  std::string name() const override { return "clip:" + inner_->name(); }
  std::unique_ptr<TensorState> make_state(std::size_t numel, std::size_t max_k,
                                          const std::string& tensor_name) const override;
  std::size_t compress(Span<const float> grad, std::size_t k, TensorState& state,
                       SparseBuffers out) override;

  // What a tensor's gradients were: how many were compressed, how many of
  // those clipped, and their norms before clipping (reports and tests).
  struct Counts {
    std::size_t seen = 0;
    std::size_t clipped = 0;
    double mean_norm = 0;
    double largest_norm = 0;
  };
  static Counts counts(const TensorState& state);

 private:
  float max_norm_;
};

// Throws NonFiniteGradient for the first NaN/Inf in g (or, when there is
// none, for a sum that overflowed).
[[noreturn]] void throw_nonfinite(const TensorState& state, const float* g, std::size_t n);

// Checks grad/k/out against the state; throws std::invalid_argument.
void check_compress_args(const Compressor& c, Span<const float> grad, std::size_t k,
                         const TensorState& state, SparseBuffers out);

}  // namespace st::compress
