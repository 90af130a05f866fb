#pragma once
// Run-time choice between the portable kernels (x86-64 baseline) and the
// AVX2+FMA+F16C kernels. The binary is built for the baseline; only the
// *_avx2.cc translation units are compiled with AVX2 flags, and they are
// called only when the CPU reports support.
#include <string>

namespace st::simd {

enum class Level { kPortable, kAvx2 };

// True when this CPU can run the AVX2 kernels (AVX2, FMA and F16C).
bool cpu_has_avx2();

// The level used when a caller does not choose one: the best the CPU
// supports, unless the environment variable ST_SIMD is "portable" or "avx2".
// ST_SIMD=avx2 on a CPU without AVX2 is an error (std::runtime_error).
Level default_level();

// Throws std::invalid_argument for names other than "portable", "avx2", "auto".
Level parse_level(const std::string& name);
const char* level_name(Level level);

}  // namespace st::simd
