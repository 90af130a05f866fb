#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/sim_plan.h"

namespace st::sim {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("topology: " + what); }

// ns-3 point-to-point links have one delay for both directions.
void check_shared_delay(const net::TopologyConfig& config, int a, int b) {
  const net::WanDirection& forward = config.wan.at({a, b});
  const net::WanDirection& backward = config.wan.at({b, a});
  if (std::abs(forward.delay_ms - backward.delay_ms) > 1e-9)
    fail(fmt::format("wan '{}' delay_ms {} differs from '{}' delay_ms {}: an ns-3 point-to-point link has one "
                     "delay for both directions",
                     net::direction_name(config, a, b), forward.delay_ms, net::direction_name(config, b, a),
                     backward.delay_ms));
  if (net::has_step_delays(forward.trace) && net::has_step_delays(backward.trace))
    fail(fmt::format("wan '{}' and '{}': both traces give per-step delays; the link has one delay, so give them in "
                     "one direction's trace only",
                     net::direction_name(config, a, b), net::direction_name(config, b, a)));
}

}  // namespace

std::string ns3_tcp_type_name(const std::string& tcp) {
  static const std::vector<std::pair<std::string, std::string>> known = {
      {"cubic", "ns3::TcpCubic"},       {"newreno", "ns3::TcpNewReno"}, {"linuxreno", "ns3::TcpLinuxReno"},
      {"bbr", "ns3::TcpBbr"},           {"bic", "ns3::TcpBic"},         {"htcp", "ns3::TcpHtcp"},
      {"highspeed", "ns3::TcpHighSpeed"}, {"hybla", "ns3::TcpHybla"},   {"illinois", "ns3::TcpIllinois"},
      {"ledbat", "ns3::TcpLedbat"},     {"lp", "ns3::TcpLp"},           {"scalable", "ns3::TcpScalable"},
      {"vegas", "ns3::TcpVegas"},       {"veno", "ns3::TcpVeno"},       {"westwood", "ns3::TcpWestwood"},
      {"yeah", "ns3::TcpYeah"},         {"dctcp", "ns3::TcpDctcp"}};
  std::string names;
  for (const auto& [name, type] : known) {
    if (name == tcp) return type;
    names += (names.empty() ? "" : ", ") + name;
  }
  fail(fmt::format("tcp '{}': unknown congestion control (known: {})", tcp, names));
}

Ns3TcpTimers ns3_tcp_timers(const net::TopologyConfig& config) {
  Ns3TcpTimers timers;
  constexpr double kLinuxDelayedAckMinS = 0.040;  // TCP_ATO_MIN
  if (config.rto_min_ms > 0) {
    timers.min_rto_s = timers.clock_granularity_s = config.rto_min_ms / 1000.0;
    timers.delayed_ack_timeout_s = kLinuxDelayedAckMinS;
  }
  return timers;
}

SimNetworkPlan plan_sim_network(const net::TopologyConfig& config) {
  SimNetworkPlan plan;
  plan.network = net::plan_network(config);
  plan.timers = ns3_tcp_timers(config);
  plan.lan_tcp_type = ns3_tcp_type_name(config.lan_tcp);
  const int clusters = static_cast<int>(config.clusters.size());
  for (int from = 0; from < clusters; ++from)
    for (int to = from + 1; to < clusters; ++to) check_shared_delay(config, from, to);
  for (const auto& [key, direction] : config.wan) {
    plan.wan_tcp_types[key] = ns3_tcp_type_name(direction.tcp);
    plan.wan_names[key] = net::direction_name(config, key.first, key.second);
  }
  return plan;
}

}  // namespace st::sim
