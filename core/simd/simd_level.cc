#include "core/simd/simd_level.h"

#include <cpuid.h>

#include <cstdlib>
#include <stdexcept>

namespace st::simd {

namespace {

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports
// does not know the "f16c" feature name, GCC's does.
bool cpu_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  return (ecx & (1u << 29)) != 0;
}

}  // namespace

bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
}

Level parse_level(const std::string& name) {
  if (name == "portable") return Level::kPortable;
  if (name == "avx2") {
    if (!cpu_has_avx2()) throw std::runtime_error("SIMD level 'avx2' requested but this CPU lacks AVX2/FMA/F16C");
    return Level::kAvx2;
  }
  if (name == "auto" || name.empty()) return cpu_has_avx2() ? Level::kAvx2 : Level::kPortable;
  throw std::invalid_argument("unknown SIMD level '" + name + "' (expected portable, avx2 or auto)");
}

Level default_level() {
  static const Level level = [] {
    const char* env = std::getenv("ST_SIMD");
    return parse_level(env ? std::string(env) : std::string("auto"));
  }();
  return level;
}

const char* level_name(Level level) { return level == Level::kAvx2 ? "avx2" : "portable"; }

}  // namespace st::simd
