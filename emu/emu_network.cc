#include "emu/emu_network.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "emu/host_check.h"
#include "emu/netns.h"

namespace st::emu {
namespace {

constexpr uint32_t kRoot = tc_handle(1, 0);
constexpr uint32_t kClass = tc_handle(1, 1);
constexpr uint32_t kQueue = tc_handle(0x20, 0);  // "20:" in tc's hexadecimal
constexpr uint32_t kQuantum = 60000;

// A LAN queue never drops in practice: 10 ms at the LAN rate, at least 4 MB.
int lan_queue_bytes(double lan_mbps) { return static_cast<int>(std::clamp(lan_mbps * 1e6 / 8 * 0.010, 4e6, 1e9)); }

void shape_lan_end(RouteSocket& socket, const std::string& ifname, double lan_mbps, int mtu) {
  const auto rate = static_cast<uint64_t>(std::llround(lan_mbps * 1e6 / 8));
  const auto burst = static_cast<uint32_t>(std::clamp(lan_mbps * 1e6 / 8 * 0.001, 2.0 * (mtu + 14), 1e9));
  socket.add_htb_root(ifname, kRoot, kClass);
  socket.set_htb_class(ifname, kRoot, kClass, rate, burst, kQuantum);
  socket.add_bfifo(ifname, kClass, kQueue, lan_queue_bytes(lan_mbps));
}

// One end of a point-to-point veth link.
struct LinkEnd {
  RouteSocket& socket;
  const std::string& ifname;
  const std::string& netns;
  const std::string& address;
};

// The veth pair between two namespaces, a /30 address on each end, both up.
void connect(const LinkEnd& a, const LinkEnd& b, int mtu) {
  a.socket.add_veth(a.ifname, a.netns, b.ifname, b.netns, mtu);
  a.socket.add_address(a.ifname, a.address + "/30");
  b.socket.add_address(b.ifname, b.address + "/30");
  a.socket.set_up(a.ifname);
  b.socket.set_up(b.ifname);
}

std::string describe_rate(const EmuWanDirection& d) {
  const auto& trace = d.schedule.trace();
  if (d.schedule.constant()) return fmt::format("{} Mbps", d.schedule.max_mbps());
  return fmt::format("trace {} (mean {:.1f}, {:.1f}-{:.1f} Mbps)", trace.source(), trace.mean_mbps(), trace.min_mbps(),
                     trace.max_mbps());
}

}  // namespace

EmuNetwork::EmuNetwork(EmulationPlan plan, const EmuNetworkOptions& options) : plan_(std::move(plan)) {
  const auto started = std::chrono::steady_clock::now();
  if (options.delay != "auto" && options.delay != "netem" && options.delay != "nfqueue")
    throw EmuError(fmt::format("delay method '{}': expected auto, netem or nfqueue", options.delay));
  try {
    build(options);
  } catch (...) {
    teardown();
    throw;
  }
  setup_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

EmuNetwork::~EmuNetwork() {
  try {
    teardown();
  } catch (const std::exception& e) {
    spdlog::error("emu: teardown of run {}: {} (run `stellatrain emu cleanup`)", plan_.run_id, e.what());
  }
}

RouteSocket& EmuNetwork::socket(const std::string& netns) {
  for (auto& s : sockets_)
    if (s->netns() == netns) return *s;
  throw EmuError(fmt::format("no netlink socket for {}", netns));
}

void EmuNetwork::build(const EmuNetworkOptions& options) {
  check_privileges();
  const auto available = available_congestion_controls();
  for (const auto& node : plan_.nodes)
    if (std::find(available.begin(), available.end(), node.tcp) == available.end())
      throw EmuError(fmt::format("congestion control '{}' (cluster {}) is not available in this kernel (it has: {})",
                                 node.tcp, plan_.routers[static_cast<std::size_t>(node.cluster)].name,
                                 fmt::join(available, " ")));
  // The record first: a crash from here on leaves an orphan that cleanup finds.
  registration_ = std::make_unique<RunRegistration>(plan_.run_id, options.kind, plan_.namespaces(), options.description);
  for (const auto& name : plan_.namespaces()) {
    create_netns(name);
    created_.push_back(name);
  }
  for (const auto& name : created_) sockets_.push_back(std::make_unique<RouteSocket>(name));
  configure_namespaces();
  build_lan();
  build_wan();
  build_shaping(options.delay);
  std::vector<LinkShaper*> shapers;
  for (auto& shaper : shapers_) shapers.push_back(shaper.get());
  replay_ = std::make_unique<LinkReplay>(shapers, options.sample_interval_s);
}

void EmuNetwork::configure_namespaces() {
  for (const auto& name : created_) {
    socket(name).set_up("lo");
    // No IPv6: its neighbour discovery would add traffic to the shaped links.
    if (access("/proc/sys/net/ipv6", F_OK) == 0) {
      write_sysctl(name, "ipv6/conf/all/disable_ipv6", "1");
      write_sysctl(name, "ipv6/conf/default/disable_ipv6", "1");
    }
  }
  for (const auto& router : plan_.routers) {
    write_sysctl(router.netns, "ipv4/ip_forward", "1");
    // A direction's packets arrive on one veth and its replies leave by
    // another: reverse-path filtering would drop them.
    write_sysctl(router.netns, "ipv4/conf/all/rp_filter", "0");
    write_sysctl(router.netns, "ipv4/conf/default/rp_filter", "0");
  }
  const std::string buffers = std::to_string(std::max<uint32_t>(plan_.socket_buffer_bytes, 4u << 20));
  for (const auto& node : plan_.nodes) {
    write_sysctl(node.netns, "ipv4/tcp_rmem", "4096 131072 " + buffers);
    write_sysctl(node.netns, "ipv4/tcp_wmem", "4096 16384 " + buffers);
    // ns-3's TCP keeps its window across idle periods; Linux by default
    // restarts from the initial window after an idle RTO, which would make
    // every bursty exchange (a DDP allreduce after the backward) start slow.
    write_sysctl(node.netns, "ipv4/tcp_slow_start_after_idle", "0");
  }
}

void EmuNetwork::build_lan() {
  for (const auto& node : plan_.nodes) {
    const auto& router = plan_.routers[static_cast<std::size_t>(node.cluster)];
    RouteSocket& inside = socket(node.netns);
    RouteSocket& gateway = socket(router.netns);
    connect({gateway, node.router_ifname, router.netns, node.router_address},
            {inside, node.ifname, node.netns, node.address}, plan_.mtu);
    // The congestion control and the rto_min ride on the node's only
    // route (every peer, the rendezvous too, is reached through it).
    inside.add_route("default", node.router_address, node.ifname, node.tcp, plan_.rto_min_ms);
    shape_lan_end(gateway, node.router_ifname, plan_.lan_mbps, plan_.mtu);
    shape_lan_end(inside, node.ifname, plan_.lan_mbps, plan_.mtu);
  }
}

void EmuNetwork::build_wan() {
  for (const auto& d : plan_.wan) {
    const auto& from = plan_.routers[static_cast<std::size_t>(d.from)];
    const auto& to = plan_.routers[static_cast<std::size_t>(d.to)];
    RouteSocket& sender = socket(from.netns);
    RouteSocket& receiver = socket(to.netns);
    connect({sender, d.out_ifname, from.netns, d.out_address}, {receiver, d.in_ifname, to.netns, d.in_address},
            plan_.mtu);
    // Traffic for cluster `to` leaves `from` by this direction's own pair.
    sender.add_route(to.lan_prefix, d.in_address, d.out_ifname);
    write_sysctl(to.netns, fmt::format("ipv4/conf/{}/rp_filter", d.in_ifname), "0");
  }
}

void EmuNetwork::build_shaping(const std::string& delay) {
  if (plan_.wan.empty()) return;
  if (delay == "netem") {
    method_ = DelayMethod::kNetem;
  } else if (delay == "nfqueue") {
    method_ = DelayMethod::kNfqueue;
  } else {
    method_ = kernel_has_netem(socket(plan_.routers.front().netns), "lo") ? DelayMethod::kNetem : DelayMethod::kNfqueue;
  }
  for (const auto& d : plan_.wan) {
    const auto& from = plan_.routers[static_cast<std::size_t>(d.from)];
    const auto& to = plan_.routers[static_cast<std::size_t>(d.to)];
    const traces::TraceStep first = d.schedule.step(d.schedule.segment_at(0));
    shapers_.push_back(std::make_unique<LinkShaper>(d, plan_.mtu, socket(from.netns), to.netns, method_, plan_.seed, first));
  }
}

nlohmann::json EmuNetwork::describe() const {
  nlohmann::json routers = nlohmann::json::array(), nodes = nlohmann::json::array(), wan = nlohmann::json::object();
  for (const auto& r : plan_.routers)
    routers.push_back({{"cluster", r.name}, {"netns", r.netns}, {"lan", r.lan_prefix}});
  for (const auto& n : plan_.nodes)
    nodes.push_back({{"rank", n.rank},
                     {"cluster", plan_.routers[static_cast<std::size_t>(n.cluster)].name},
                     {"netns", n.netns},
                     {"interface", n.ifname},
                     {"address", n.address},
                     {"tcp", n.tcp}});
  for (const auto& d : plan_.wan) {
    nlohmann::json j = {{"interfaces", fmt::format("{} ({}) -> {} ({})", d.out_ifname, plan_.routers[d.from].netns,
                                                   d.in_ifname, plan_.routers[d.to].netns)},
                        {"rate", describe_rate(d)},
                        {"max_mbps", d.max_mbps},
                        {"delay_ms", d.delay_ms},
                        {"buffer_bytes", d.buffer_bytes},
                        {"longest_outage_s", 0.0}};
    if (!d.schedule.constant()) {
      net::WanDirection as_direction;
      as_direction.trace = d.schedule.trace();
      j["longest_outage_s"] = net::longest_outage_s(as_direction);
    }
    if (method_ == DelayMethod::kNfqueue) j["nfqueue"] = d.queue_number;
    wan[d.name] = j;
  }
  return {{"run_id", plan_.run_id},
          {"prefix", plan_.prefix},
          {"mtu", plan_.mtu},
          {"socket_buffer_bytes", std::max<uint32_t>(plan_.socket_buffer_bytes, 4u << 20)},
          {"shaping", "HTB class rate per trace step, TBF gate closed at 0 Mbps, bfifo of the buffer's bytes"},
          {"delay_method", to_string(method_)},
          {"tcp", "per node: the congestion control on its default route (congctl), tcp_slow_start_after_idle 0, "
                  "tcp_rmem/tcp_wmem maximum = socket_buffer_bytes"},
          {"rto_min_ms", plan_.rto_min_ms > 0 ? plan_.rto_min_ms : kLinuxDefaultRtoMinMs},
          {"lan", {{"mbps", plan_.lan_mbps}, {"shaped_by", "HTB at both ends of each node's veth pair"},
                   {"delay_ms", "not emulated (veth)"}}},
          {"setup_s", setup_s_},
          {"routers", routers},
          {"nodes", nodes},
          {"wan", wan}};
}

nlohmann::json EmuNetwork::counters() {
  nlohmann::json links = nlohmann::json::object();
  uint64_t bytes = 0, drops = 0, lost = 0;
  for (auto& shaper : shapers_) {
    const LinkCounters c = shaper->counters();
    nlohmann::json& link = links[shaper->direction().name];
    link = {{"wire_bytes", c.bytes}, {"packets", c.packets}, {"queue_drops", c.drops}, {"trace_losses", c.lost}};
    if (c.delay_measured) {
      link["delay_late_packets"] = c.late_packets;
      link["delay_worst_late_ms"] = c.worst_late_ms;
    }
    bytes += c.bytes;
    drops += c.drops;
    lost += c.lost;
  }
  return {{"links", links}, {"wire_bytes", bytes}, {"queue_drops", drops}, {"trace_losses", lost}};
}

CleanupReport EmuNetwork::teardown() {
  CleanupReport report;
  if (torn_down_) return report;
  torn_down_ = true;
  std::string first_error;
  try {
    if (replay_) replay_->stop();
  } catch (const std::exception& e) {
    first_error = e.what();
  }
  replay_.reset();
  shapers_.clear();  // delay lines release their packets and unbind
  sockets_.clear();  // no socket may keep a namespace alive
  remove_run_namespaces(plan_.run_id, created_, report);
  registration_.reset();
  if (!first_error.empty()) throw EmuError(first_error);
  return report;
}

}  // namespace st::emu
