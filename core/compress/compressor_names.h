#pragma once
// The base compressors by name: the one list that the factory
// (compressor.cc), StellaTrain's `compressor:` option, the compute
// profile's per-compressor curves and the benchmarks enumerate, so that a
// new compressor is added here and in make_compressor only. Standard
// headers only: the sim and apps layers include it without compressor.h.
#include <string>
#include <string_view>
#include <vector>

namespace st::compress {

// StellaTrain's default first (its cache-aware blocks), then the others.
inline const std::vector<std::string>& base_compressor_names() {
  static const std::vector<std::string> names{"thresholdv16", "thresholdv", "topk", "randomk"};
  return names;
}

// thresholdv16's selection is every compute profile's default curve
// (`compress_ns_per_element_at_density`); these have curves of their own.
inline std::vector<std::string> compressors_with_own_curves() {
  const auto& all = base_compressor_names();
  return {all.begin() + 1, all.end()};
}

inline bool is_base_compressor(std::string_view name) {
  for (const auto& known : base_compressor_names())
    if (name == known) return true;
  return false;
}

// "thresholdv16, thresholdv, topk, randomk" (for error messages). `names`
// defaults to the base compressors.
inline std::string joined_names(const std::vector<std::string>& names = base_compressor_names()) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace st::compress
