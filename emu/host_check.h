#pragma once
// What the emulator needs from the host, checked before anything is built,
// with errors that say what is missing; and what a manifest records about
// the host (CPU count, load) so a reader can judge contention: the compute
// of an emulated run is real and on the wall clock.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace st::emu {

// CAP_NET_ADMIN (links, qdiscs, iptables) and CAP_SYS_ADMIN (namespaces:
// unshare, mount under /run/netns, setns). Throws EmuError naming what is
// missing and how to get it (run as root).
void check_privileges();
bool has_privileges();

// The kernel's congestion controls (net.ipv4.tcp_available_congestion_control).
std::vector<std::string> available_congestion_controls();

// {"cpus": N, "load_average": [1, 5, 15 min], "kernel": "6.1.0 ..."}
nlohmann::json host_description();

// The host's CPU time over all CPUs, in clock ticks (/proc/stat's "cpu"
// line; all zero when it cannot be read).
struct CpuTimes {
  uint64_t busy = 0;   // user, nice, system, irq, softirq
  uint64_t idle = 0;   // idle, iowait
  uint64_t steal = 0;  // taken by the hypervisor for other guests
};
CpuTimes cpu_times();

// Shares of the CPU time between two readings, {"busy", "idle", "steal"}
// (they sum to 1): an emulated run's timing is real, so a host that was
// busy or stolen from during the run explains a slow one. Null when
// /proc/stat could not be read.
nlohmann::json cpu_use_between(const CpuTimes& start, const CpuTimes& end);

// Why a run's times may hold the host's delays and not only the network's,
// one line each (none on a host that kept up): the hypervisor taking over
// 5% of the CPU (`cpu_use` as cpu_use_between gives it), the delay line
// releasing over 1% of the packets a millisecond or more late (`wan_links`:
// the manifest's summary.wan_links), or a timing run's paced compute ending
// over runtime::kLateShareThatBreaksPacing of a node's tasks late
// (`pacing_by_rank`: each rank's summary.pacing, null where a rank was not
// paced). docs/emu.md measures them.
std::vector<std::string> host_fell_behind(const nlohmann::json& cpu_use, const nlohmann::json& wan_links,
                                          const nlohmann::json& pacing_by_rank = nlohmann::json::array());

}  // namespace st::emu
