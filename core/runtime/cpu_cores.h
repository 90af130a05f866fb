#pragma once
// How many CPU cores this process may run on: the affinity mask (what a
// container's cpuset or `taskset` allows), which std::thread::
// hardware_concurrency() ignores.
namespace st::runtime {

int available_cpu_cores();

}  // namespace st::runtime
