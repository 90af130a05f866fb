#include "core/model/math_kernels.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "core/simd/simd_level.h"

namespace st::model {
namespace {

// The variables each level sets: ATen's dispatch, oneDNN's JIT, OpenBLAS's
// kernels (its core type names a CPU generation; Haswell is AVX2 + FMA,
// Nehalem SSE4.2-era SSE kernels), and OpenBLAS's own threads.
struct Level {
  const char* name;
  const char* aten;
  const char* onednn;
  const char* openblas;
};
constexpr std::array<Level, 2> kLevels{{
    {"avx2", "avx2", "AVX2", "Haswell"},
    {"sse41", "default", "SSE41", "Nehalem"},
}};

constexpr const char* kPinned = "ST_MATH_PINNED";  // the level this process was started with

const Level* find_level(const std::string& name) {
  for (const auto& level : kLevels)
    if (name == level.name) return &level;
  return nullptr;
}

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value ? value : fallback;
}

// True when every variable already holds the level's value.
bool already_pinned(const Level& level) {
  return env_or(kPinned, "") == level.name && env_or("ATEN_CPU_CAPABILITY", "") == level.aten &&
         env_or("ONEDNN_MAX_CPU_ISA", "") == level.onednn && env_or("OPENBLAS_CORETYPE", "") == level.openblas &&
         env_or("OPENBLAS_NUM_THREADS", "") == "1";
}

}  // namespace

void pin_math_kernels(char** argv) {
  const std::string asked = env_or("ST_MATH", "avx2");
  if (asked == "native") {
    setenv(kPinned, "native", 1);
    return;
  }
  const Level* level = find_level(asked);
  if (level == nullptr)
    throw std::invalid_argument(fmt::format("ST_MATH={}: not one of avx2, sse41, native", asked));
  if (std::string(level->name) == "avx2" && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    std::fprintf(stderr,
                 "stellatrain: this CPU has no AVX2/FMA: the math runs at the sse41 level, whose results differ from "
                 "the avx2 level's (ST_MATH, docs/engine.md)\n");
    level = find_level("sse41");
  }
  if (already_pinned(*level)) return;
  setenv(kPinned, level->name, 1);
  setenv("ATEN_CPU_CAPABILITY", level->aten, 1);
  setenv("ONEDNN_MAX_CPU_ISA", level->onednn, 1);
  setenv("OPENBLAS_CORETYPE", level->openblas, 1);
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  // OpenBLAS chose its kernels when it was loaded: start again with them
  // pinned. Should that fail, ATen and oneDNN still read theirs lazily.
  execv("/proc/self/exe", argv);
  std::fprintf(stderr, "stellatrain: could not restart with pinned math kernels (%s); OpenBLAS keeps its own\n",
               std::strerror(errno));
}

nlohmann::json math_kernels() {
  return {{"level", env_or(kPinned, "native (not pinned)")},
          {"aten_cpu_capability", env_or("ATEN_CPU_CAPABILITY", "auto")},
          {"onednn_max_cpu_isa", env_or("ONEDNN_MAX_CPU_ISA", "auto")},
          {"openblas_coretype", env_or("OPENBLAS_CORETYPE", "auto")},
          {"openblas_threads", env_or("OPENBLAS_NUM_THREADS", "auto")},
          {"torch_threads", at::get_num_threads()},
          {"cpu_avx2", simd::cpu_has_avx2()}};
}

}  // namespace st::model
