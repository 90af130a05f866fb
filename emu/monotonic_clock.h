#pragma once
// CLOCK_MONOTONIC in nanoseconds: the one clock the emulator's real-time
// threads (trace replay, delay line) schedule by, so their times compare.
#include <time.h>

#include <cstdint>

namespace st::emu {

inline int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

}  // namespace st::emu
