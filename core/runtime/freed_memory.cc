#include "core/runtime/freed_memory.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace st::runtime {
namespace {

// Blocks up to this size come from the heap and stay there once freed.
// Larger ones (rare here) are still mapped and unmapped by themselves.
constexpr int kKeepBelowBytes = 1 << 30;

std::string& current_setting() {
  static std::string setting = "glibc";
  return setting;
}

}  // namespace

void apply_malloc_setting() {
  const char* asked = std::getenv("ST_MALLOC");
  const std::string choice = asked ? asked : "keep";
  if (choice != "keep" && choice != "glibc")
    throw std::invalid_argument(fmt::format("ST_MALLOC={}: not one of keep, glibc", choice));
#if defined(__GLIBC__)
  if (choice == "keep") {
    // mallopt returns 0 when glibc refuses a value; then glibc's own
    // settings stay, and the setting and a line on stderr say so.
    const bool kept = mallopt(M_MMAP_THRESHOLD, kKeepBelowBytes) == 1 && mallopt(M_TRIM_THRESHOLD, kKeepBelowBytes) == 1;
    current_setting() = kept ? "keep" : "glibc (mallopt refused keep)";
    if (!kept)
      std::fprintf(stderr, "stellatrain: ST_MALLOC=keep: glibc refused the thresholds; runs are slower, results the same\n");
    return;
  }
  current_setting() = "glibc";
#else
  current_setting() = "unsupported";
#endif
}

std::string malloc_setting() { return current_setting(); }

}  // namespace st::runtime
