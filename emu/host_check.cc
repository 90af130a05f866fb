#include "emu/host_check.h"

#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "emu/netns.h"

namespace st::emu {
namespace {

constexpr int kCapNetAdmin = 12;
constexpr int kCapSysAdmin = 21;

uint64_t effective_capabilities() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0) return std::strtoull(line.c_str() + 7, nullptr, 16);
  return 0;
}

std::string missing_capabilities() {
  const uint64_t caps = effective_capabilities();
  std::string missing;
  if (!(caps & (uint64_t{1} << kCapNetAdmin))) missing += "CAP_NET_ADMIN";
  if (!(caps & (uint64_t{1} << kCapSysAdmin))) missing += missing.empty() ? "CAP_SYS_ADMIN" : " and CAP_SYS_ADMIN";
  return missing;
}

}  // namespace

bool has_privileges() { return missing_capabilities().empty(); }

void check_privileges() {
  const std::string missing = missing_capabilities();
  if (missing.empty()) return;
  throw EmuError(fmt::format(
      "the emu backend needs {} (run it as root, e.g. with sudo): it creates network namespaces (unshare, mount "
      "under /run/netns: CAP_SYS_ADMIN) and veth links, qdiscs and iptables rules in them (CAP_NET_ADMIN)",
      missing));
}

std::vector<std::string> available_congestion_controls() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_available_congestion_control");
  std::vector<std::string> names;
  for (std::string name; in >> name;) names.push_back(name);
  return names;
}

nlohmann::json host_description() {
  double load[3] = {0, 0, 0};
  const int samples = getloadavg(load, 3);
  utsname system{};
  uname(&system);
  return {{"cpus", sysconf(_SC_NPROCESSORS_ONLN)},
          {"load_average", samples == 3 ? nlohmann::json::array({load[0], load[1], load[2]}) : nlohmann::json(nullptr)},
          {"kernel", fmt::format("{} {}", system.release, system.version)}};
}

CpuTimes cpu_times() {
  std::ifstream stat("/proc/stat");
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || label != "cpu") return {};
  stat >> steal;  // absent on kernels before 2.6.11: zero
  return {user + nice + system + irq + softirq, idle + iowait, steal};
}

nlohmann::json cpu_use_between(const CpuTimes& start, const CpuTimes& end) {
  const double busy = static_cast<double>(end.busy - start.busy);
  const double idle = static_cast<double>(end.idle - start.idle);
  const double steal = static_cast<double>(end.steal - start.steal);
  const double total = busy + idle + steal;
  if (end.busy < start.busy || end.idle < start.idle || end.steal < start.steal || total <= 0) return nullptr;
  return {{"busy", busy / total}, {"idle", idle / total}, {"steal", steal / total}};
}

std::vector<std::string> host_fell_behind(const nlohmann::json& cpu_use, const nlohmann::json& wan_links) {
  std::vector<std::string> reasons;
  const double steal = cpu_use.is_object() ? cpu_use.value("steal", 0.0) : 0.0;
  if (steal > 0.05) reasons.push_back(fmt::format("the hypervisor took {:.0f}% of the host's CPU time", 100 * steal));
  uint64_t late = 0, packets = 0;
  for (const auto& [name, link] : wan_links.items()) {
    if (!link.contains("delay_late_packets")) continue;
    late += link.value("delay_late_packets", uint64_t{0});
    packets += link.value("packets", uint64_t{0});
  }
  if (packets > 0 && late * 100 > packets)
    reasons.push_back(fmt::format("the delay line released {:.1f}% of the WAN packets a millisecond or more late",
                                  100.0 * static_cast<double>(late) / static_cast<double>(packets)));
  return reasons;
}

}  // namespace st::emu
