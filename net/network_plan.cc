// Validation of a TopologyConfig and the sizes derived from it (MTU, queue
// limits, socket buffers). Shared by every backend; testable alone.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "net/network_plan.h"

namespace st::net {
namespace {

constexpr int kHeaderBytes = 52;  // IPv4 20 + TCP 20 + timestamp option 12 (ns-3 default)
constexpr int kMinAutoMtu = 1500;
constexpr int kMaxMtu = 65535;  // PointToPointNetDevice::SetMtu takes a uint16_t
constexpr int kMinMtu = 576;
constexpr double kMinSocketBuffer = 64.0 * 1024 * 1024;

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("topology: " + what); }

bool finite_at_least(double value, double low) { return std::isfinite(value) && value >= low; }

void check_clusters(const TopologyConfig& config) {
  if (config.clusters.empty()) fail("clusters: at least one cluster is needed");
  std::set<std::string> names;
  for (std::size_t i = 0; i < config.clusters.size(); ++i) {
    const ClusterSpec& cluster = config.clusters[i];
    if (cluster.name.empty()) fail(fmt::format("clusters[{}].name: must not be empty", i));
    if (cluster.name.find_first_of(",\"\n") != std::string::npos)
      fail(fmt::format("clusters[{}].name '{}': must not contain ',', '\"' or a newline (it names CSV rows)", i,
                       cluster.name));
    if (!names.insert(cluster.name).second) fail(fmt::format("clusters[{}].name '{}': used twice", i, cluster.name));
    if (cluster.nodes < 1)
      fail(fmt::format("clusters[{}] ('{}').nodes = {}: must be >= 1", i, cluster.name, cluster.nodes));
  }
  if (!(std::isfinite(config.lan_mbps) && config.lan_mbps > 0))
    fail(fmt::format("lan_mbps = {}: must be a positive number", config.lan_mbps));
  if (!finite_at_least(config.lan_delay_ms, 0))
    fail(fmt::format("lan_delay_ms = {}: must be >= 0", config.lan_delay_ms));
  check_tcp_name(config.lan_tcp);
  if (config.mtu != 0 && (config.mtu < kMinMtu || config.mtu > kMaxMtu))
    fail(fmt::format("mtu = {}: must be 0 (automatic) or in [{}, {}]", config.mtu, kMinMtu, kMaxMtu));
  if (config.target_packets_in_flight < 1)
    fail(fmt::format("target_packets_in_flight = {}: must be >= 1", config.target_packets_in_flight));
}

void check_wan_keys(const TopologyConfig& config) {
  const int clusters = static_cast<int>(config.clusters.size());
  for (const auto& [key, direction] : config.wan) {
    const auto [from, to] = key;
    if (from < 0 || to < 0 || from >= clusters || to >= clusters || from == to)
      fail(fmt::format("wan ({}, {}): not a pair of distinct cluster indices in [0, {})", from, to, clusters));
  }
  for (int from = 0; from < clusters; ++from)
    for (int to = 0; to < clusters; ++to)
      if (from != to && !config.wan.count({from, to}))
        fail(fmt::format("missing WAN direction '{}' (clusters {} -> {}): every ordered pair of clusters needs one",
                         direction_name(config, from, to), from, to));
}

double max_step_delay_ms(const traces::Trace& trace) {
  double largest = -1;
  for (const auto& step : trace.steps()) largest = std::max(largest, step.delay_ms);
  return largest;
}

WanDirectionPlan plan_direction(const TopologyConfig& config, int from, int to) {
  const WanDirection& direction = config.wan.at({from, to});
  WanDirectionPlan plan;
  plan.from = from;
  plan.to = to;
  plan.name = direction_name(config, from, to);
  const std::string field = fmt::format("wan '{}'", plan.name);
  if (direction.trace.empty()) {
    if (!(std::isfinite(direction.constant_mbps) && direction.constant_mbps > 0))
      fail(fmt::format("{}: no trace and constant_mbps = {} (must be > 0)", field, direction.constant_mbps));
    plan.max_mbps = direction.constant_mbps;
  } else {
    plan.max_mbps = direction.trace.max_mbps();
    if (!(plan.max_mbps > 0))
      fail(fmt::format("{}: trace {} never rises above 0 Mbps", field, direction.trace.source()));
  }
  if (!finite_at_least(direction.delay_ms, 0))
    fail(fmt::format("{}.delay_ms = {}: must be >= 0", field, direction.delay_ms));
  if (!finite_at_least(direction.buffer_bytes, 0))
    fail(fmt::format("{}.buffer_bytes = {}: must be >= 0", field, direction.buffer_bytes));
  if (direction.buffer_bytes == 0 && !(std::isfinite(direction.buffer_bdp) && direction.buffer_bdp > 0))
    fail(fmt::format("{}.buffer_bdp = {}: must be > 0 when buffer_bytes is 0", field, direction.buffer_bdp));
  check_tcp_name(direction.tcp);
  plan.delay_ms = std::max(direction.delay_ms, max_step_delay_ms(direction.trace));
  plan.rtt_s = 2 * (plan.delay_ms + 2 * config.lan_delay_ms) / 1000;
  plan.bdp_bytes = plan.max_mbps * 1e6 / 8 * plan.rtt_s;
  plan.buffer_bytes = direction.buffer_bytes > 0 ? direction.buffer_bytes : direction.buffer_bdp * plan.bdp_bytes;
  return plan;
}

}  // namespace

const std::vector<std::string>& tcp_names() {
  static const std::vector<std::string> names = {"cubic", "newreno", "linuxreno", "bbr",   "bic",      "htcp",
                                                 "highspeed", "hybla", "illinois", "ledbat", "lp", "scalable",
                                                 "vegas", "veno",    "westwood", "yeah",  "dctcp"};
  return names;
}

void check_tcp_name(const std::string& tcp) {
  const auto& names = tcp_names();
  if (std::find(names.begin(), names.end(), tcp) != names.end()) return;
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  fail(fmt::format("tcp '{}': unknown congestion control (known: {})", tcp, known));
}

bool has_step_delays(const traces::Trace& trace) {
  return std::any_of(trace.steps().begin(), trace.steps().end(), [](const auto& step) { return step.delay_ms >= 0; });
}

double longest_outage_s(const WanDirection& direction) {
  const traces::Trace& trace = direction.trace;
  if (trace.empty()) return 0;
  const auto& steps = trace.steps();
  // Walk two loops so that an outage across the loop boundary is seen whole.
  double longest = 0, run = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const double length = trace.step_end_s(i) - (i == 0 ? 0.0 : steps[i].time_s);
      run = steps[i].mbps > 0 ? 0 : run + length;
      longest = std::max(longest, run);
    }
  }
  return std::min(longest, trace.duration_s());
}

int choose_mtu(double worst_in_flight_bytes, int target_packets) {
  const double segment = std::ceil(worst_in_flight_bytes / std::max(1, target_packets));
  const double mtu = segment + kHeaderBytes;
  return static_cast<int>(std::clamp(mtu, double{kMinAutoMtu}, double{kMaxMtu}));
}

NetworkPlan plan_network(const TopologyConfig& config) {
  check_clusters(config);
  check_wan_keys(config);
  NetworkPlan plan;
  const int clusters = static_cast<int>(config.clusters.size());
  double worst_in_flight = 0, largest_bdp = 0;
  for (int from = 0; from < clusters; ++from) {
    for (int to = 0; to < clusters; ++to) {
      if (from == to) continue;
      plan.directions.push_back(plan_direction(config, from, to));
      const WanDirectionPlan& direction = plan.directions.back();
      worst_in_flight = std::max(worst_in_flight, direction.bdp_bytes + direction.buffer_bytes);
      largest_bdp = std::max(largest_bdp, direction.bdp_bytes);
    }
  }
  plan.mtu_automatic = config.mtu == 0;
  plan.mtu = plan.mtu_automatic ? choose_mtu(worst_in_flight, config.target_packets_in_flight) : config.mtu;
  plan.segment_bytes = plan.mtu - kHeaderBytes;
  plan.packets_in_flight = worst_in_flight / plan.segment_bytes;
  // A byte limit below two packets would drop nearly everything.
  for (WanDirectionPlan& direction : plan.directions) {
    direction.buffer_bytes = std::max(direction.buffer_bytes, 2.0 * plan.mtu);
    if (direction.buffer_bytes > std::numeric_limits<uint32_t>::max())
      fail(fmt::format("wan '{}': buffer of {} bytes does not fit a 32-bit queue size (ns-3's and Linux qdiscs')", direction.name,
                       direction.buffer_bytes));
  }
  const double socket_buffer = std::max(kMinSocketBuffer, 4 * largest_bdp);
  if (socket_buffer > std::numeric_limits<uint32_t>::max())
    fail(fmt::format("socket buffer of 4 x BDP = {} bytes does not fit a 32-bit size", socket_buffer));
  plan.socket_buffer_bytes = static_cast<uint32_t>(socket_buffer);
  return plan;
}

}  // namespace st::net
