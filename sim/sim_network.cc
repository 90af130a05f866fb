// SimNetwork: builds the ns-3 topology of topology.h and wires the replay,
// the recorder and the transports to it (docs/sim-network.md).
#include "sim/sim_network.h"

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "sim/link_replay.h"
#include "sim/ns3_fabric.h"
#include "sim/ns3_transport.h"

namespace st::sim {
namespace {

constexpr uint16_t kTransportPort = 7000;

ns3::DataRate rate_of(double mbps) { return ns3::DataRate(static_cast<uint64_t>(std::llround(mbps * 1e6))); }

ns3::Ptr<ns3::PointToPointNetDevice> p2p(ns3::Ptr<ns3::NetDevice> device) {
  return ns3::DynamicCast<ns3::PointToPointNetDevice>(device);
}

// The TCP payload of a packet seen at a PointToPointNetDevice's PhyRxEnd
// (PPP header still on): total IP length minus the IP and TCP header
// lengths, read straight from the serialised header bytes. 0 for non-TCP.
uint32_t tcp_payload_bytes(const ns3::Packet& packet) {
  constexpr uint32_t kPpp = 2, kIp = 20, kTcp = 20;
  std::array<uint8_t, kPpp + kIp + kTcp> bytes{};
  if (packet.GetSize() < bytes.size()) return 0;
  packet.CopyData(bytes.data(), bytes.size());
  const uint8_t* ip = bytes.data() + kPpp;
  if (ip[9] != 6) return 0;  // not TCP
  const uint32_t ip_header = (ip[0] & 0x0f) * 4u;
  const uint32_t ip_total = (uint32_t{ip[2]} << 8) | ip[3];
  if (ip_header != kIp) return 0;  // ns-3 sends no IP options
  const uint32_t tcp_header = (ip[kIp + 12] >> 4) * 4u;
  return ip_total > ip_header + tcp_header ? ip_total - ip_header - tcp_header : 0;
}

}  // namespace

class SimNetwork::Impl {
 public:
  explicit Impl(const TopologyConfig& config);
  ~Impl();

  TopologyConfig config;
  SimNetworkPlan sim_plan;
  const NetworkPlan& plan;  // sim_plan.network
  double origin_s = 0;
  std::vector<int> cluster_of;
  std::vector<std::unique_ptr<Ns3Transport>> transports;
  LinkRecorder recorder;

 private:
  void build_nodes();
  void build_lan();
  void build_wan();
  void install_wan_queues();
  void assign_addresses();
  void start_replay_and_recorder();
  void start_transports();
  void record_arrival(int link, const WanLinkDelay& delay, ns3::Ptr<const ns3::Packet> packet);

  struct WanLink {
    int a = 0, b = 0;  // clusters, a < b; device 0 on a's router, device 1 on b's
    ns3::NetDeviceContainer devices;
    std::array<ns3::Ptr<WanQueueDisc>, 2> queues;
    std::shared_ptr<WanLinkDelay> delay;
  };

  ns3::NodeContainer hosts_, routers_;
  std::vector<ns3::NetDeviceContainer> lan_devices_;  // per host: {host device, router device}
  std::vector<WanLink> wan_links_;
  std::vector<ns3::Ipv4Address> host_addresses_;
  std::unique_ptr<Ns3ReplayClock> replay_clock_;  // before the replays: they use it until they go
  std::vector<std::shared_ptr<DirectionReplay>> replays_;
  std::shared_ptr<Ns3Fabric> fabric_;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // trace callbacks check it

  friend class SimNetwork;
};

SimNetwork::Impl::Impl(const TopologyConfig& topology)
    : config(topology), sim_plan(plan_sim_network(topology)), plan(sim_plan.network) {
  origin_s = ns3::Simulator::Now().GetSeconds();
  // A fresh address space (the allocator is global and aborts on reuse) and
  // the run number that seeds every ns-3 random stream (loss draws).
  ns3::Ipv4AddressGenerator::Reset();
  ns3::RngSeedManager::SetRun(config.seed);
  build_nodes();
  build_lan();
  build_wan();
  ns3::InternetStackHelper().Install(hosts_);
  ns3::InternetStackHelper().Install(routers_);
  install_wan_queues();
  assign_addresses();
  ns3::Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  start_replay_and_recorder();
  start_transports();
}

SimNetwork::Impl::~Impl() {
  alive_.reset();
  if (fabric_) fabric_->detach();
}

void SimNetwork::Impl::build_nodes() {
  cluster_of = net::cluster_of_each_node(config);
  hosts_.Create(static_cast<uint32_t>(cluster_of.size()));
  routers_.Create(static_cast<uint32_t>(config.clusters.size()));
}

void SimNetwork::Impl::build_lan() {
  ns3::PointToPointHelper lan;
  lan.SetDeviceAttribute("DataRate", ns3::DataRateValue(rate_of(config.lan_mbps)));
  lan.SetDeviceAttribute("Mtu", ns3::UintegerValue(static_cast<uint64_t>(plan.mtu)));
  lan.SetChannelAttribute("Delay", ns3::TimeValue(ns3::Seconds(config.lan_delay_ms / 1000)));
  // The LAN must never be the bottleneck or drop: room for every socket's
  // whole send buffer (ns-3 queues allocate nothing up front).
  const double world = static_cast<double>(cluster_of.size());
  const double lan_queue = std::min(4e9, static_cast<double>(plan.socket_buffer_bytes) * world);
  lan.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
               ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::BYTES, static_cast<uint32_t>(lan_queue))));
  for (std::size_t host = 0; host < cluster_of.size(); ++host)
    lan_devices_.push_back(lan.Install(hosts_.Get(host), routers_.Get(cluster_of[host])));
}

void SimNetwork::Impl::build_wan() {
  ns3::PointToPointHelper wan;
  wan.SetDeviceAttribute("Mtu", ns3::UintegerValue(static_cast<uint64_t>(plan.mtu)));
  // The device keeps one packet; the bottleneck buffer is the WanQueueDisc.
  wan.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns3::StringValue("1p"));
  const int clusters = static_cast<int>(config.clusters.size());
  for (int a = 0; a < clusters; ++a) {
    for (int b = a + 1; b < clusters; ++b) {
      WanLink link;
      link.a = a;
      link.b = b;
      link.devices = wan.Install(routers_.Get(a), routers_.Get(b));
      link.delay = std::make_shared<WanLinkDelay>();
      link.delay->channel = ns3::DynamicCast<ns3::PointToPointChannel>(link.devices.Get(0)->GetChannel());
      link.delay->base_delay_s = config.wan.at({a, b}).delay_ms / 1000;  // equal both ways (plan_sim_network)
      link.delay->delay_s = link.delay->base_delay_s;
      link.delay->channel->SetAttribute("Delay", ns3::TimeValue(ns3::Seconds(link.delay->delay_s)));
      wan_links_.push_back(std::move(link));
    }
  }
}

// Before addresses are assigned: Ipv4AddressHelper installs its default
// FqCoDel only on devices without a root queue disc.
void SimNetwork::Impl::install_wan_queues() {
  for (WanLink& link : wan_links_) {
    for (int side = 0; side < 2; ++side) {
      const int from = side == 0 ? link.a : link.b;
      const int to = side == 0 ? link.b : link.a;
      const auto plan_of = std::find_if(plan.directions.begin(), plan.directions.end(),
                                        [&](const WanDirectionPlan& d) { return d.from == from && d.to == to; });
      auto queue = ns3::CreateObject<WanQueueDisc>();
      queue->SetMaxSize(ns3::QueueSize(ns3::QueueSizeUnit::BYTES, static_cast<uint32_t>(plan_of->buffer_bytes)));
      ns3::Ptr<ns3::NetDevice> device = link.devices.Get(side);
      device->GetNode()->GetObject<ns3::TrafficControlLayer>()->SetRootQueueDiscOnDevice(device, queue);
      link.queues[side] = queue;
    }
  }
}

void SimNetwork::Impl::assign_addresses() {
  ns3::Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.252");
  ns3::TrafficControlHelper no_queue_disc;
  for (const ns3::NetDeviceContainer& devices : lan_devices_) {
    host_addresses_.push_back(addresses.Assign(devices).GetAddress(0));
    addresses.NewNetwork();
    no_queue_disc.Uninstall(devices);  // plain device queues on the LAN (no FqCoDel)
  }
  for (const WanLink& link : wan_links_) {
    addresses.Assign(link.devices);
    addresses.NewNetwork();
  }
}

void SimNetwork::Impl::start_replay_and_recorder() {
  replay_clock_ = std::make_unique<Ns3ReplayClock>(origin_s);
  int64_t stream = 0;
  for (WanLink& link : wan_links_) {
    for (int side = 0; side < 2; ++side) {
      const int from = side == 0 ? link.a : link.b;
      const int to = side == 0 ? link.b : link.a;
      const WanDirection& direction = config.wan.at({from, to});
      RateSchedule schedule(direction.trace, direction.constant_mbps, config.trace_offset_s);
      const int index = recorder.add_link(sim_plan.wan_names.at({from, to}), schedule);
      DirectionDevices devices{p2p(link.devices.Get(side)), p2p(link.devices.Get(1 - side)), link.queues[side]};
      devices.sender->SetDataRate(rate_of(schedule.max_mbps()));  // until the first step applies
      // The link's one delay follows per-step delays of whichever direction
      // gives them (plan_sim_network allows only one), else a's -> b's.
      const bool has_delays = net::has_step_delays(direction.trace);
      auto replay = std::make_shared<DirectionReplay>(std::move(schedule), devices, link.delay, has_delays,
                                                      *replay_clock_, stream++);
      replay->start();
      replays_.push_back(std::move(replay));
      std::weak_ptr<int> alive = alive_;
      // A plain pointer, guarded by `alive` (replays_ own the delay as long
      // as this Impl lives): a shared_ptr here would close a reference cycle
      // device -> trace callback -> delay -> channel -> device, which ns-3's
      // dispose does not break (LeakSanitizer found it).
      const WanLinkDelay* delay = link.delay.get();
      devices.receiver->TraceConnectWithoutContext(
          "PhyRxEnd", ns3::Callback<void, ns3::Ptr<const ns3::Packet>>(
                          [this, alive, index, delay](ns3::Ptr<const ns3::Packet> packet) {
                            if (!alive.expired()) record_arrival(index, *delay, packet);
                          }));
    }
  }
}

void SimNetwork::Impl::record_arrival(int link, const WanLinkDelay& delay, ns3::Ptr<const ns3::Packet> packet) {
  const double departure_s = ns3::Simulator::Now().GetSeconds() - origin_s - delay.delay_s;
  recorder.record_delivery(link, departure_s, packet->GetSize(), tcp_payload_bytes(*packet));
}

void SimNetwork::Impl::start_transports() {
  FabricConfig fabric;
  const int world = static_cast<int>(cluster_of.size());
  for (int node = 0; node < world; ++node) fabric.nodes.push_back(FabricNode{hosts_.Get(node), host_addresses_[node]});
  for (int from = 0; from < world; ++from) {
    for (int to = 0; to < world; ++to) {
      const int a = cluster_of[from], b = cluster_of[to];
      fabric.tcp_type_names.push_back(a == b ? sim_plan.lan_tcp_type : sim_plan.wan_tcp_types.at({a, b}));
    }
  }
  fabric.segment_bytes = static_cast<uint32_t>(plan.segment_bytes);
  fabric.socket_buffer_bytes = plan.socket_buffer_bytes;
  fabric.timers = sim_plan.timers;
  fabric.port = kTransportPort;
  fabric_ = std::make_shared<Ns3Fabric>(std::move(fabric));
  for (int node = 0; node < world; ++node) transports.push_back(std::make_unique<Ns3Transport>(fabric_, node));
  // Inside the event loop, after the nodes' own initialisation events.
  std::weak_ptr<Ns3Fabric> weak = fabric_;
  ns3::Simulator::ScheduleNow([weak]() {
    if (auto fabric = weak.lock()) fabric->start();
  });
}

// --- SimNetwork --------------------------------------------------------------

SimNetwork::SimNetwork(const TopologyConfig& config) : impl_(std::make_unique<Impl>(config)) {}
SimNetwork::~SimNetwork() = default;

int SimNetwork::world_size() const { return static_cast<int>(impl_->cluster_of.size()); }

int SimNetwork::cluster_of(int node) const { return impl_->cluster_of.at(static_cast<std::size_t>(node)); }

Ns3Transport& SimNetwork::ns3_transport(int node) {
  if (node < 0 || node >= world_size())
    throw std::invalid_argument(fmt::format("SimNetwork: node {} outside world of {}", node, world_size()));
  return *impl_->transports[static_cast<std::size_t>(node)];
}

comm::Transport& SimNetwork::transport(int node) { return ns3_transport(node); }

const NetworkPlan& SimNetwork::plan() const { return impl_->plan; }

double SimNetwork::now_s() const { return ns3::Simulator::Now().GetSeconds() - impl_->origin_s; }

const LinkRecorder& SimNetwork::recorder() const { return impl_->recorder; }

void SimNetwork::write_link_csv(const std::string& path) const { impl_->recorder.write_csv(path, now_s()); }

std::vector<LinkTotals> SimNetwork::wan_totals() const { return impl_->recorder.totals(); }

void SimNetwork::stop_replay() {
  for (auto& replay : impl_->replays_) replay->stop();
}

}  // namespace st::sim
