#pragma once
// What the emulator needs from the host, checked before anything is built,
// with errors that say what is missing; and what a manifest records about
// the host (CPU count, load) so a reader can judge contention: the compute
// of an emulated run is real and on the wall clock.
#include <nlohmann/json.hpp>

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

}  // namespace st::emu
