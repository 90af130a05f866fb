#pragma once
// Exact top-k selection by magnitude, shared by topk, thresholdv (overflow
// path) and thresholdv16 (over block sums).
//
// Instead of nth_element over the whole tensor (98 ms on 11.2M floats) or
// torch::topk (212 ms), one vectorised filter pass keeps the elements at or
// above a threshold that is a little below the k-th largest magnitude (from
// a hint or a strided sample), and nth_element runs on those few candidates.
// A hint that misses (too few or too many candidates) is replaced by the
// sample's estimate for one more pass when that lies between what the pass
// learnt; after that a miss is corrected by bisection on the float's bit
// pattern, so the result is always exact.
//
// Tie rule: among elements whose magnitude equals the k-th largest, the ones
// with lower indices are taken. Output indices are strictly increasing.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/compress/kernels.h"

namespace st::compress {

// Of the c candidate indices (increasing), writes to out the k (<= c) whose
// |x| is largest, in index order, ties to the lower index; sets *cutoff to
// the k-th largest magnitude. `scratch` holds c floats.
std::size_t take_top_of_candidates(const float* x, const uint32_t* candidates, std::size_t c,
                                   std::size_t k, float* scratch, uint32_t* out, float* cutoff);

class TopSelector {
 public:
  // Allocates the workspace for tensors of `numel` elements and k <= max_k.
  TopSelector(std::size_t numel, std::size_t max_k);

  struct Result {
    std::size_t count = 0;       // == min(k, n)
    float cutoff = 0.0f;         // magnitude of the k-th largest element
    bool nonfinite = false;      // x holds NaN/Inf; nothing was written
    std::size_t passes = 0;      // filter passes over x (1 when the hint was good)
    float threshold = 0.0f;      // the filter threshold of the pass that kept the candidates
                                 // (the cutoff itself when a tie block was scanned whole)
  };

  // Writes the indices of the k largest |x[i]| into out (capacity >= k).
  // `hint` > 0 is a threshold expected to be slightly below the cutoff; 0
  // means "estimate from a sample". A hint that keeps fewer than k or more
  // than the buffer holds costs one more pass, at the sample's estimate.
  Result select(const Kernels& kernels, const float* x, std::size_t n, std::size_t k, float hint,
                uint32_t* out);

  // Among the candidates of the last select(), how many have |x| >= t
  // (t at or above the threshold that pass used). For threshold diagnostics.
  std::size_t count_candidates_at_least(const float* x, float t) const;

 private:
  float sample_threshold(const float* x, std::size_t n, std::size_t k);
  static std::size_t finish_full_scan(const float* x, std::size_t n, std::size_t k, float cutoff,
                                      uint32_t* out);

  std::vector<uint32_t> candidates_;
  std::vector<float> keys_;
  std::vector<float> sample_;
  std::size_t last_candidates_ = 0;
};

}  // namespace st::compress
