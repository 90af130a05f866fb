#include "emu/host_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "core/runtime/paced_executor.h"
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

// One line for every rank whose paced compute did not hold, or none.
std::optional<std::string> late_pacing_reason(const nlohmann::json& pacing_by_rank) {
  std::vector<std::string> ranks;
  double most_late = 0, worst_ms = 0;
  for (size_t rank = 0; rank < pacing_by_rank.size(); ++rank) {
    const nlohmann::json& pacing = pacing_by_rank[rank];
    if (!pacing.is_object()) continue;
    const double share = pacing.value("late_share", 0.0);
    if (share <= runtime::kLateShareThatBreaksPacing) continue;
    ranks.push_back(std::to_string(rank));
    most_late = std::max(most_late, share);
    worst_ms = std::max(worst_ms, pacing.value("worst_late_ms", 0.0));
  }
  if (ranks.empty()) return std::nullopt;
  return fmt::format("paced compute ran late on rank{} {}: up to {:.1f}% of a node's tasks ended over {} ms after "
                     "their priced time (worst {:.1f} ms; summary.pacing in each rank's manifest)",
                     ranks.size() > 1 ? "s" : "", fmt::join(ranks, ", "), 100 * most_late,
                     std::chrono::duration_cast<std::chrono::milliseconds>(runtime::kPacingTolerance).count(),
                     worst_ms);
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

std::vector<std::string> host_fell_behind(const nlohmann::json& cpu_use, const nlohmann::json& wan_links,
                                          const nlohmann::json& pacing_by_rank) {
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
  if (auto late_pacing = late_pacing_reason(pacing_by_rank)) reasons.push_back(*late_pacing);
  return reasons;
}

}  // namespace st::emu
