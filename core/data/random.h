#pragma once
// Small portable random numbers for data shuffling and synthetic samples.
// std::shuffle and std::normal_distribution differ between standard
// libraries, so seeded datasets and shards would not be reproducible across
// toolchains; SplitMix64 plus explicit algorithms are identical everywhere.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace st::data {

// One SplitMix64 step: a strong 64-bit mixing function, also used to derive
// independent streams from (seed, purpose, index) tuples.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t mix64(uint64_t a, uint64_t b) { return mix64(mix64(a) ^ b); }

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  // Advances the stream as `draws` calls of next() would: each step adds
  // the same constant, so a stream can be entered at any position.
  void discard(uint64_t draws) { state_ += draws * 0x9E3779B97F4A7C15ull; }

  // Uniform in [0, bound) without modulo bias (rejection of the short tail).
  uint64_t below(uint64_t bound) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t value = next();
    while (value >= limit) value = next();
    return value % bound;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

  // Standard normal by Box-Muller (one value per call, always kDrawsPerNormal
  // draws; simplicity over speed).
  static constexpr uint64_t kDrawsPerNormal = 2;
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log() stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  uint64_t state_;
};

// Fisher-Yates with SplitMix64: the same permutation on every platform.
template <class T>
void portable_shuffle(std::vector<T>& items, SplitMix64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[rng.below(i)]);
  }
}

}  // namespace st::data
