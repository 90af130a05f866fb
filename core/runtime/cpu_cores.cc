#include "core/runtime/cpu_cores.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace st::runtime {

int available_cpu_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace st::runtime
