#include "sim/flow/flow_network.h"

#include <fmt/format.h>
#include <ns3/core-module.h>

#include <cmath>
#include <map>
#include <stdexcept>

#include "net/schedule_walker.h"
#include "sim/flow/flow_fabric.h"
#include "sim/flow/flow_model.h"
#include "sim/link_replay.h"
#include "sim/sim_plan.h"

namespace st::sim::flow {
namespace {

double bytes_per_s(double mbps) { return mbps * 1e6 / 8; }

// The LAN never drops in the packet model either (its queue holds every
// socket's buffer): a buffer this large never fills.
constexpr double kLanBufferBytes = 1e12;

}  // namespace

TcpConstants ns3_tcp_constants(const SimNetworkPlan& plan) {
  TcpConstants k;
  k.segment_bytes = plan.network.segment_bytes;
  k.socket_buffer_bytes = plan.network.socket_buffer_bytes;
  k.min_rto_s = plan.timers.min_rto_s;
  k.clock_granularity_s = plan.timers.clock_granularity_s;
  return k;
}

class FlowNetwork::Impl {
 public:
  explicit Impl(const net::TopologyConfig& config);
  ~Impl();

  net::TopologyConfig config;
  SimNetworkPlan sim_plan;
  double origin_s = 0;
  Ns3ReplayClock clock;
  FlowModel model;
  net::LinkRecorder recorder;
  std::vector<int> cluster_of;
  std::vector<int> lan_up, lan_down;        // model links per host
  std::map<std::pair<int, int>, int> wan;   // model link per (from, to) cluster
  std::map<int, int> recorder_index;        // model link -> recorder link (WAN only)
  struct Carried {                          // per WAN link, cumulative; whole bytes go to the recorder
    double wire = 0, payload = 0, packets = 0;
  };
  std::map<int, Carried> carried;
  std::vector<std::unique_ptr<net::ScheduleWalker>> walkers;
  std::shared_ptr<FlowFabric> fabric;
  std::vector<std::unique_ptr<FlowTransport>> transports;

 private:
  void build_links();
  std::vector<int> connections();
  void start_replay();
  void record(int link, double start_s, double end_s, double wire, double payload, double packets);
};

FlowNetwork::Impl::Impl(const net::TopologyConfig& topology)
    : config(topology),
      sim_plan(plan_sim_network(topology)),  // the packet model's rules too: a scenario runs under both
      origin_s(ns3::Simulator::Now().GetSeconds()),
      clock(origin_s),
      model(ns3_tcp_constants(sim_plan)),
      cluster_of(net::cluster_of_each_node(config)) {
  build_links();
  model.on_link_usage([this](int link, double start, double end, double wire, double payload, double packets) {
    record(link, start, end, wire, payload, packets);
  });
  const int world = static_cast<int>(cluster_of.size());
  fabric = std::make_shared<FlowFabric>(model, clock, world, connections());
  for (int node = 0; node < world; ++node) transports.push_back(std::make_unique<FlowTransport>(fabric, node));
  start_replay();
}

FlowNetwork::Impl::~Impl() {
  for (auto& walker : walkers) walker->stop();
  if (fabric) fabric->detach();
}

void FlowNetwork::Impl::build_links() {
  for (std::size_t host = 0; host < cluster_of.size(); ++host) {
    lan_up.push_back(model.add_link(bytes_per_s(config.lan_mbps), config.lan_delay_ms / 1000, kLanBufferBytes));
    lan_down.push_back(model.add_link(bytes_per_s(config.lan_mbps), config.lan_delay_ms / 1000, kLanBufferBytes));
  }
  for (const auto& direction : sim_plan.network.directions) {
    const net::WanDirection& d = config.wan.at({direction.from, direction.to});
    // The first step's rate applies when the replay starts (at once).
    const int link = model.add_link(bytes_per_s(direction.max_mbps),
                                    d.delay_ms / 1000, direction.buffer_bytes);
    wan[{direction.from, direction.to}] = link;
  }
}

// One connection per ordered pair of nodes, opened now; its ACKs take the
// reverse path.
std::vector<int> FlowNetwork::Impl::connections() {
  const int world = static_cast<int>(cluster_of.size());
  std::vector<int> connection_of(static_cast<std::size_t>(world) * world, -1);
  for (int from = 0; from < world; ++from) {
    for (int to = 0; to < world; ++to) {
      if (from == to) continue;
      const int a = cluster_of[from], b = cluster_of[to];
      std::vector<int> data{lan_up[from]}, acks{lan_up[to]};
      if (a != b) {
        data.push_back(wan.at({a, b}));
        acks.push_back(wan.at({b, a}));
      }
      data.push_back(lan_down[to]);
      acks.push_back(lan_down[from]);
      connection_of[static_cast<std::size_t>(from) * world + to] = model.add_connection(data, acks, 0);
    }
  }
  return connection_of;
}

void FlowNetwork::Impl::start_replay() {
  for (const auto& direction : sim_plan.network.directions) {
    const int from = direction.from, to = direction.to;
    const net::WanDirection& d = config.wan.at({from, to});
    net::RateSchedule schedule(d.trace, d.constant_mbps, config.trace_offset_s);
    const int link = wan.at({from, to});
    recorder_index[link] = recorder.add_link(sim_plan.wan_names.at({from, to}), schedule);
    // As in the packet model, per-step delays set the delay of both
    // directions (an ns-3 link has one; plan_sim_network allows them in
    // one direction's trace only).
    const bool drives_delay = net::has_step_delays(d.trace);
    const int reverse = wan.at({to, from});
    const double base_delay_s = d.delay_ms / 1000;
    walkers.push_back(std::make_unique<net::ScheduleWalker>(
        std::move(schedule), clock, [this, link, reverse, drives_delay, base_delay_s](const traces::TraceStep& step, double, bool) {
          const double now = clock.now_s();
          fabric->pump();  // the model reaches now at the old rate
          model.set_link_rate(link, bytes_per_s(step.mbps), now);
          model.set_link_loss(link, step.loss, now);
          if (drives_delay) {
            const double delay_s = step.delay_ms >= 0 ? step.delay_ms / 1000 : base_delay_s;
            model.set_link_delay(link, delay_s, now);
            model.set_link_delay(reverse, delay_s, now);
          }
          fabric->pump();
        }));
  }
  for (auto& walker : walkers) walker->start();
}

// Whole bytes per interval, the fractions carried on, so that the rows add
// up to what the model carried.
void FlowNetwork::Impl::record(int link, double start_s, double end_s, double wire, double payload, double packets) {
  const auto it = recorder_index.find(link);
  if (it == recorder_index.end()) return;  // a LAN link
  Carried& total = carried[link];
  const Carried before = total;
  total.wire += wire, total.payload += payload, total.packets += packets;
  const auto whole = [](double after, double before) {
    return static_cast<uint64_t>(std::floor(after)) - static_cast<uint64_t>(std::floor(before));
  };
  recorder.record_interval(it->second, start_s, end_s, whole(total.wire, before.wire),
                           whole(total.packets, before.packets), whole(total.payload, before.payload));
}

// --- FlowNetwork ---------------------------------------------------------------

FlowNetwork::FlowNetwork(const net::TopologyConfig& config) : impl_(std::make_unique<Impl>(config)) {}
FlowNetwork::~FlowNetwork() = default;

int FlowNetwork::world_size() const { return static_cast<int>(impl_->cluster_of.size()); }

comm::Transport& FlowNetwork::transport(int node) {
  if (node < 0 || node >= world_size())
    throw std::invalid_argument(fmt::format("FlowNetwork: node {} outside world of {}", node, world_size()));
  return *impl_->transports[static_cast<std::size_t>(node)];
}

const net::NetworkPlan& FlowNetwork::plan() const { return impl_->sim_plan.network; }

double FlowNetwork::now_s() const { return impl_->clock.now_s(); }

void FlowNetwork::write_link_csv(const std::string& path) const {
  impl_->fabric->pump();  // what the links carried up to now
  impl_->recorder.write_csv(path, now_s());
}

std::vector<net::LinkTotals> FlowNetwork::wan_totals() const {
  impl_->fabric->pump();
  return impl_->recorder.totals();
}

void FlowNetwork::stop_replay() {
  for (auto& walker : impl_->walkers) walker->stop();
}

}  // namespace st::sim::flow
