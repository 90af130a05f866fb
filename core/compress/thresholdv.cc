// thresholdv: one filter pass at a per-tensor threshold carried over from the
// previous iteration.
//
// The threshold is stored relative to a scale measured each call on a fixed
// strided sample of the gradient (the sample's mean magnitude: a tail
// quantile of the sample would be several times noisier). Because the sample positions never change, a gradient that only
// changes scale keeps exactly its count; shape changes move the count a
// little and the next call corrects it from the exact cutoff it observed.
#include <algorithm>
#include <cmath>
#include <utility>

#include "core/compress/compressors.h"
#include "core/compress/top_select.h"

namespace st::compress {
namespace {

constexpr std::size_t kScaleSample = 16384;

struct ThresholdVState final : TensorState {
  ThresholdVState(std::size_t n, std::size_t max_k)
      : candidates(std::min(n, 2 * max_k + 1024)),
        keys(candidates.size()),
        sample(std::min(n, kScaleSample)),
        selector(n, max_k) {}
  std::vector<uint32_t> candidates;
  std::vector<float> keys;
  std::vector<float> sample;
  TopSelector selector;
  double relative_threshold = 0.0;  // threshold / scale; 0 until the first call
  std::size_t threshold_k = 0;      // the k relative_threshold was learned for
};

// How many of the m sample points `count` of n elements correspond to.
double sample_points(std::size_t count, std::size_t n, std::size_t m) {
  return static_cast<double>(count) / static_cast<double>(n) * static_cast<double>(m);
}

// A sample rank from a number of points, within the sample.
std::size_t rank_of(double points, std::size_t m) {
  return std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(points)), 1, m);
}

// The sample rank that corresponds to `count` of n elements; at least 32
// sample points above it keep the quantile stable at low density.
std::size_t sample_rank(std::size_t count, std::size_t n, std::size_t m) {
  return rank_of(std::max(32.0, sample_points(count, n, m)), m);
}

// The sample ranks whose quantiles' ratio says how far to lower a
// threshold that kept c < k of n elements. Where c elements are fewer than
// 32 sample points, both ranks go deeper by the same factor (c's to 32, k's
// in proportion, at most the whole sample): the ratio then compares the
// same proportion k / c, exactly so under a power-law tail, with enough
// points to be stable. Flooring each rank at 32 on its own instead made
// them equal below about 0.2% density (or in tensors of k < 32), and the
// threshold could then only rise: on ResNet-18 at 0.195% thresholdv's
// output fell to about 1/40 of k over 150 iterations.
std::pair<std::size_t, std::size_t> shortfall_ranks(std::size_t k, std::size_t c, std::size_t n, std::size_t m) {
  const double deeper = std::max(1.0, 32.0 / sample_points(std::max<std::size_t>(c, 1), n, m));
  return {rank_of(sample_points(k, n, m) * deeper, m), rank_of(sample_points(c, n, m) * deeper, m)};
}

float sample_value_at_rank(std::vector<float>& sample, std::size_t j) {
  std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(j - 1), sample.end(),
                   std::greater<float>());
  return sample[j - 1];
}

// Fills the fixed strided sample with magnitudes; returns their mean.
float take_sample(ThresholdVState& s, const float* g, std::size_t n) {
  const std::size_t m = s.sample.size();
  const double stride = static_cast<double>(n) / static_cast<double>(m);
  double sum = 0.0;
  for (std::size_t i = 0; i < m; ++i) {
    s.sample[i] = std::fabs(g[static_cast<std::size_t>(i * stride)]);
    sum += s.sample[i];
  }
  return static_cast<float>(sum / static_cast<double>(m));
}

}  // namespace

ThresholdV::ThresholdV(simd::Level simd) : kernels_(kernels(simd)) {}

std::unique_ptr<TensorState> ThresholdV::make_state(std::size_t numel, std::size_t max_k,
                                                    const std::string& tensor_name) const {
  auto state = std::make_unique<ThresholdVState>(numel, std::min(max_k, numel));
  state->name = tensor_name;
  state->numel = numel;
  state->max_k = max_k;
  return state;
}

std::size_t ThresholdV::compress(Span<const float> grad, std::size_t k, TensorState& base,
                                 SparseBuffers out) {
  check_compress_args(*this, grad, k, base, out);
  auto& s = static_cast<ThresholdVState&>(base);
  const float* g = grad.data();
  const std::size_t n = grad.size();
  if (n == 0) return 0;
  k = std::min(k, n);
  if (k == 0 || k == n) {
    // Nothing to choose: the exact selector handles both ends (and the
    // finiteness check) in one pass.
    const auto r = s.selector.select(kernels_, g, n, k, 0.0f, out.indices);
    if (r.nonfinite) throw_nonfinite(s, g, n);
    for (std::size_t j = 0; j < r.count; ++j) out.values[j] = g[out.indices[j]];
    s.last_threshold_count = r.count;
    return r.count;
  }
  const float scale = take_sample(s, g, n);
  // A threshold learned for another k (the controller changed the density)
  // says nothing about this one: start again from the sample's quantile.
  if (s.threshold_k != k) s.relative_threshold = 0.0;
  s.threshold_k = k;
  const float threshold = s.relative_threshold > 0.0 && scale > 0.0f
                              ? static_cast<float>(s.relative_threshold * scale)
                              : sample_value_at_rank(s.sample, sample_rank(k, n, s.sample.size()));
  bool nonfinite = false;
  const std::size_t cap = s.candidates.size();
  const std::size_t c = kernels_.select_abs_ge(g, n, threshold, s.candidates.data(), cap, &nonfinite);
  if (nonfinite) throw_nonfinite(s, g, n);
  s.last_threshold = threshold;
  s.last_threshold_count = c;

  std::size_t count = 0;
  float cutoff = threshold;
  if (c <= k) {
    std::copy_n(s.candidates.data(), c, out.indices);
    count = c;
    // Too few passed: the exact cutoff is unknown without another pass, so
    // lower the threshold by the sample's view of the shortfall: the ratio
    // of its quantiles at k and at c elements.
    if (c < k) {
      const auto [rank_k, rank_c] = shortfall_ranks(k, c, n, s.sample.size());
      const float at_k = sample_value_at_rank(s.sample, rank_k);
      const float at_c = c == 0 ? 0.0f : sample_value_at_rank(s.sample, rank_c);
      // A quantile of 0 (k's rank deep in a sample of zeros) says nothing
      // either: halve, as when nothing passed, rather than keep a threshold
      // of 0 that would never be stored.
      cutoff = at_c > 0.0f && at_k > 0.0f ? std::min(threshold, threshold * (at_k / at_c)) : threshold * 0.5f;
    }
  } else if (c <= cap) {
    // More than k passed: keep the k largest, in index order.
    count = take_top_of_candidates(g, s.candidates.data(), c, k, s.keys.data(), out.indices, &cutoff);
  } else {
    // The buffer overflowed: the threshold was far too low. Fall back to the
    // exact selector so the result does not favour the front of the tensor.
    const auto r = s.selector.select(kernels_, g, n, k, 0.0f, out.indices);
    cutoff = r.cutoff;
    count = r.count;
  }
  for (std::size_t j = 0; j < count; ++j) out.values[j] = g[out.indices[j]];
  if (scale > 0.0f && cutoff > 0.0f) s.relative_threshold = static_cast<double>(cutoff) / scale;
  return count;
}

}  // namespace st::compress
