#include "core/compress/top_select.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace st::compress {
namespace {

constexpr std::size_t kSampleSize = 16384;
// 0x7f800000 is +Inf; every finite magnitude has a smaller bit pattern, and
// for non-negative floats the bit patterns sort like the values.
constexpr uint32_t kInfBits = 0x7f800000u;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

std::size_t candidate_capacity(std::size_t numel, std::size_t max_k) {
  return std::min(numel, 2 * max_k + 4096);
}

}  // namespace

TopSelector::TopSelector(std::size_t numel, std::size_t max_k)
    : candidates_(candidate_capacity(numel, max_k)),
      keys_(candidate_capacity(numel, max_k)),
      sample_(std::min(numel, kSampleSize)) {}

// The j-th largest of a strided sample, with j chosen so that the threshold
// is below the true cutoff with high probability (3 sigma) but keeps only
// about 1.25k candidates at 1% density.
float TopSelector::sample_threshold(const float* x, std::size_t n, std::size_t k) {
  const std::size_t s = std::min(n, sample_.size());
  const double stride = static_cast<double>(n) / static_cast<double>(s);
  for (std::size_t i = 0; i < s; ++i) sample_[i] = std::fabs(x[static_cast<std::size_t>(i * stride)]);
  const double expected = static_cast<double>(k) / static_cast<double>(n) * static_cast<double>(s);
  const auto j = static_cast<std::size_t>(std::ceil(expected + 3.0 * std::sqrt(expected) + 2.0));
  if (j >= s) return 0.0f;
  std::nth_element(sample_.begin(), sample_.begin() + static_cast<std::ptrdiff_t>(j - 1),
                   sample_.begin() + static_cast<std::ptrdiff_t>(s), std::greater<float>());
  return sample_[j - 1];
}

TopSelector::Result TopSelector::select(const Kernels& kernels, const float* x, std::size_t n,
                                        std::size_t k, float hint, uint32_t* out) {
  Result result;
  if (n == 0) return result;
  k = std::min(k, n);
  result.count = k;
  const bool hinted = hint > 0.0f && std::isfinite(hint);
  float t = hinted ? hint : sample_threshold(x, n, k);
  uint32_t lo = 0;         // count(|x| >= lo) >= k is known (lo = 0: everything)
  uint32_t hi = kInfBits;  // count(|x| >= hi) < k is assumed (only Inf/NaN there)
  const std::size_t capacity = candidates_.size();
  bool probed_next = false;
  bool sampled = !hinted;
  while (true) {
    ++result.passes;
    bool nonfinite = false;
    const std::size_t c = kernels.select_abs_ge(x, n, t, candidates_.data(), capacity, &nonfinite);
    if (nonfinite) {
      result.nonfinite = true;
      return result;
    }
    if (k == 0) return result;
    if (c >= k && c <= capacity) {
      last_candidates_ = c;
      result.threshold = t;
      take_top_of_candidates(x, candidates_.data(), c, k, keys_.data(), out, &result.cutoff);
      return result;
    }
    const uint32_t tb = bits_of(t);
    if (c < k) {
      hi = tb;
    } else {
      lo = tb;
    }
    // A hint that missed (a tensor whose magnitudes moved, or whose tail is
    // lighter than the hint's margin assumed, e.g. normal values, where 0.9
    // of the cutoff keeps 2.7k at 0.2% density and overflows the buffer)
    // is replaced by the sample's estimate before any bisection: bisecting
    // in bit space from the hint took up to ~20 full passes.
    if (!sampled) {
      sampled = true;
      const uint32_t estimate = bits_of(sample_threshold(x, n, k));
      if (estimate > lo && estimate < hi) {
        t = float_of(estimate);
        continue;
      }
    }
    if (hi - lo <= 1) {
      // A block of ties at magnitude `lo` holds more than the candidate
      // buffer: the cutoff is `lo` itself; one scan writes the result.
      result.cutoff = float_of(lo);
      result.threshold = result.cutoff;
      finish_full_scan(x, n, k, result.cutoff, out);
      last_candidates_ = 0;
      return result;
    }
    // Too many at t: first try the next float up, which resolves a tie block
    // in one more pass; otherwise bisect in bit space (log-like in value).
    if (c > capacity && !probed_next) {
      probed_next = true;
      t = float_of(tb + 1);
    } else {
      t = float_of(lo + (hi - lo) / 2);
    }
  }
}

std::size_t take_top_of_candidates(const float* x, const uint32_t* candidates, std::size_t c,
                                   std::size_t k, float* scratch, uint32_t* out, float* cutoff) {
  if (k == 0) return 0;
  for (std::size_t j = 0; j < c; ++j) scratch[j] = std::fabs(x[candidates[j]]);
  // scratch is reordered by nth_element; magnitudes are re-read from x below
  // so the output keeps the candidates' index order.
  std::nth_element(scratch, scratch + (k - 1), scratch + c, std::greater<float>());
  const float v = scratch[k - 1];
  *cutoff = v;
  std::size_t above = 0;
  for (std::size_t j = 0; j < k; ++j) above += scratch[j] > v;  // every key > v is in the first k
  std::size_t ties_left = k - above;
  std::size_t written = 0;
  for (std::size_t j = 0; j < c; ++j) {
    const float a = std::fabs(x[candidates[j]]);
    if (a > v || (a == v && ties_left > 0)) {
      ties_left -= (a == v);
      out[written++] = candidates[j];
    }
  }
  return written;
}

std::size_t TopSelector::finish_full_scan(const float* x, std::size_t n, std::size_t k,
                                          float cutoff, uint32_t* out) {
  std::size_t above = 0;
  for (std::size_t i = 0; i < n; ++i) above += std::fabs(x[i]) > cutoff;
  std::size_t ties_left = k - std::min(k, above);
  std::size_t written = 0;
  for (std::size_t i = 0; i < n && written < k; ++i) {
    const float a = std::fabs(x[i]);
    if (a > cutoff || (a == cutoff && ties_left > 0)) {
      ties_left -= (a == cutoff);
      out[written++] = static_cast<uint32_t>(i);
    }
  }
  return written;
}

std::size_t TopSelector::count_candidates_at_least(const float* x, float t) const {
  std::size_t c = 0;
  for (std::size_t j = 0; j < last_candidates_; ++j) c += std::fabs(x[candidates_[j]]) >= t;
  return c;
}

}  // namespace st::compress
