#include "emu/emu_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <stdexcept>

namespace st::emu {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("emu: " + what); }

std::string ipv4(uint32_t address) {
  return fmt::format("{}.{}.{}.{}", address >> 24, (address >> 16) & 0xff, (address >> 8) & 0xff, address & 0xff);
}

// Node i of a cluster: the i-th /30 of 10.<cluster+1>.0.0/16 (router .1, node .2).
uint32_t lan_subnet(int cluster, int index) {
  return (10u << 24) | (static_cast<uint32_t>(cluster + 1) << 16) | (static_cast<uint32_t>(index) * 4);
}

// WAN direction d: the d-th /30 of 100.64.0.0/10 (shared address space, not
// routed on the Internet; out end .1, in end .2).
uint32_t wan_subnet(int direction) { return (100u << 24) | (64u << 16) | (static_cast<uint32_t>(direction) * 4); }

bool has_loss(const traces::Trace& trace) {
  return std::any_of(trace.steps().begin(), trace.steps().end(), [](const auto& step) { return step.loss > 0; });
}

// Every outgoing WAN direction of a cluster (and its LAN, when it has more
// than one node) must use one congestion control: Linux's default is per
// network namespace, and a node's namespace carries all of its connections.
std::string cluster_tcp(const net::TopologyConfig& config, int cluster) {
  std::string chosen;
  std::string chosen_from;
  for (const auto& [key, direction] : config.wan) {
    if (key.first != cluster) continue;
    const std::string name = net::direction_name(config, key.first, key.second);
    if (chosen.empty()) {
      chosen = direction.tcp;
      chosen_from = name;
    } else if (linux_tcp_name(direction.tcp) != linux_tcp_name(chosen)) {
      fail(fmt::format("wan '{}' tcp '{}' differs from '{}' tcp '{}': the emulator sets one congestion control "
                       "per node namespace, so the directions leaving a cluster must agree",
                       name, direction.tcp, chosen_from, chosen));
    }
  }
  if (chosen.empty()) return linux_tcp_name(config.lan_tcp);
  const auto& spec = config.clusters[static_cast<std::size_t>(cluster)];
  if (spec.nodes > 1 && linux_tcp_name(config.lan_tcp) != linux_tcp_name(chosen))
    fail(fmt::format("lan tcp '{}' differs from '{}' tcp '{}' in cluster '{}' ({} nodes): the emulator sets one "
                     "congestion control per node namespace",
                     config.lan_tcp, chosen_from, chosen, spec.name, spec.nodes));
  return linux_tcp_name(chosen);
}

}  // namespace

std::string make_run_id() {
  static const char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::random_device device;
  std::mt19937 generator(device());
  std::uniform_int_distribution<int> pick(0, 35);
  std::string id;
  for (int i = 0; i < kRunIdLength; ++i) id += kAlphabet[pick(generator)];
  return id;
}

bool is_run_id(const std::string& text) {
  return text.size() == static_cast<std::size_t>(kRunIdLength) &&
         std::all_of(text.begin(), text.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)); });
}

std::string run_prefix(const std::string& run_id) { return std::string(kPrefix) + run_id + "-"; }

std::string run_id_of(const std::string& name) {
  const std::string prefix = kPrefix;
  const std::size_t length = prefix.size() + kRunIdLength + 1;
  if (name.size() <= length + 1 || name.compare(0, prefix.size(), prefix) != 0 || name[length - 1] != '-') return "";
  const std::string id = name.substr(prefix.size(), kRunIdLength);
  // The namespaces are r<cluster> and n<rank>; anything else is not ours.
  const std::string role = name.substr(length);
  const bool ours = (role[0] == 'r' || role[0] == 'n') &&
                    std::all_of(role.begin() + 1, role.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  return ours && is_run_id(id) ? id : "";
}

std::string linux_tcp_name(const std::string& tcp) {
  if (tcp == "newreno" || tcp == "linuxreno") return "reno";
  return tcp;
}

std::vector<std::string> EmulationPlan::namespaces() const {
  std::vector<std::string> names;
  for (const auto& router : routers) names.push_back(router.netns);
  for (const auto& node : nodes) names.push_back(node.netns);
  return names;
}

EmulationPlan plan_emulation(const net::TopologyConfig& given, const std::string& run_id) {
  if (!run_id.empty() && !is_run_id(run_id)) fail(fmt::format("run id '{}': expected {} characters of [a-z0-9]", run_id, kRunIdLength));
  net::TopologyConfig config = given;
  // The MTU is the veth default unless the scenario gives one: the kernel's
  // TCP has no per-packet cost problem that a larger MTU would solve.
  if (config.mtu == 0) config.mtu = 1500;
  if (config.model != net::NetworkModel::packet)
    fail(fmt::format("links.model: {} is the sim backend's flow-level model; the emulator carries real packets "
                     "(give model: packet, or run with --network packet)",
                     net::network_model_name(config.model)));
  EmulationPlan plan;
  plan.network = net::plan_network(config);  // the neutral rules first (names the field)
  plan.run_id = run_id.empty() ? std::string(kRunIdLength, '0') : run_id;
  plan.prefix = run_prefix(plan.run_id);
  plan.mtu = plan.network.mtu;
  plan.lan_mbps = config.lan_mbps;
  plan.socket_buffer_bytes = plan.network.socket_buffer_bytes;
  plan.seed = config.seed;
  plan.rto_min_ms = config.rto_min_ms;

  const int clusters = static_cast<int>(config.clusters.size());
  if (clusters > kMaxClusters)
    fail(fmt::format("clusters: {} clusters, the emulator takes at most {} (interface names are limited to 15 "
                     "characters)",
                     clusters, kMaxClusters));
  if (config.total_nodes() > kMaxNodes)
    fail(fmt::format("clusters: {} nodes, the emulator takes at most {}", config.total_nodes(), kMaxNodes));
  if (config.lan_delay_ms > kMaxLanDelayMs)
    fail(fmt::format("lan delay_ms = {}: the emulator does not add LAN delay (a veth pair takes about 0.03 ms); "
                     "give at most {} ms, or use the sim backend",
                     config.lan_delay_ms, kMaxLanDelayMs));
  if (config.lan_mbps > 1e6) fail(fmt::format("lan mbps = {}: at most 1,000,000 on the emulator", config.lan_mbps));

  int rank = 0;
  for (int c = 0; c < clusters; ++c) {
    const auto& spec = config.clusters[static_cast<std::size_t>(c)];
    EmuRouter router;
    router.cluster = c;
    router.name = spec.name;
    router.netns = fmt::format("{}r{}", plan.prefix, c);
    router.lan_prefix = fmt::format("{}/16", ipv4(lan_subnet(c, 0)));
    plan.routers.push_back(router);
    const std::string tcp = cluster_tcp(config, c);
    for (int i = 0; i < spec.nodes; ++i, ++rank) {
      EmuNode node;
      node.rank = rank;
      node.cluster = c;
      node.netns = fmt::format("{}n{}", plan.prefix, rank);
      node.ifname = fmt::format("{}n{}", plan.prefix, rank);
      node.router_ifname = fmt::format("{}l{}", plan.prefix, rank);
      node.router_address = ipv4(lan_subnet(c, i) + 1);
      node.address = ipv4(lan_subnet(c, i) + 2);
      node.tcp = tcp;
      plan.nodes.push_back(node);
    }
  }

  int index = 0;
  for (const auto& direction_plan : plan.network.directions) {
    const auto& direction = config.wan.at({direction_plan.from, direction_plan.to});
    EmuWanDirection d;
    d.from = direction_plan.from;
    d.to = direction_plan.to;
    d.name = direction_plan.name;
    d.out_ifname = fmt::format("{}w{}-{}", plan.prefix, d.from, d.to);
    d.in_ifname = fmt::format("{}v{}-{}", plan.prefix, d.from, d.to);
    d.out_address = ipv4(wan_subnet(index) + 1);
    d.in_address = ipv4(wan_subnet(index) + 2);
    d.queue_number = static_cast<uint16_t>(index);
    d.schedule = net::RateSchedule(direction.trace, direction.constant_mbps, config.trace_offset_s);
    d.max_mbps = direction_plan.max_mbps;
    d.buffer_bytes = direction_plan.buffer_bytes;
    d.delay_ms = direction.delay_ms;
    d.has_loss = has_loss(direction.trace);
    d.has_step_delays = net::has_step_delays(direction.trace);
    if (d.max_mbps > kMaxWanMbps)
      fail(fmt::format("wan '{}': up to {} Mbps, the emulator shapes at most {} Mbps", d.name, d.max_mbps, kMaxWanMbps));
    if (d.buffer_bytes > 2e9)
      fail(fmt::format("wan '{}': a buffer of {} bytes, the emulator's bfifo takes at most 2e9", d.name, d.buffer_bytes));
    plan.wan.push_back(std::move(d));
    ++index;
  }
  return plan;
}

}  // namespace st::emu
