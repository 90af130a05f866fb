#include "sim/sim_backend.h"

#include <fmt/format.h>
#include <ns3/core-module.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "core/runtime/freed_memory.h"
#include "core/train/run/training_data.h"
#include "sim/sim_wan.h"
#include "sim/sim_plan.h"

#ifndef ST_NS3_VERSION
#error "ST_NS3_VERSION must be defined by the build"
#endif


namespace st::sim {
namespace {

nlohmann::json describe_direction(const WanDirection& d) {
  nlohmann::json j = {{"delay_ms", d.delay_ms}, {"tcp", d.tcp}};
  if (d.trace.empty()) {
    j["mbps"] = d.constant_mbps;
  } else {
    j["trace"] = d.trace.source();
    j["trace_mean_mbps"] = d.trace.mean_mbps();
    j["trace_min_mbps"] = d.trace.min_mbps();
    j["trace_max_mbps"] = d.trace.max_mbps();
    j["trace_duration_s"] = d.trace.duration_s();
  }
  if (d.buffer_bytes > 0) j["buffer_bytes"] = d.buffer_bytes;
  else j["buffer_bdp"] = d.buffer_bdp;
  return j;
}

// The TCP timers every socket has, as ns-3's attributes that set them.
nlohmann::json timers_of(const net::TopologyConfig& topology) {
  const Ns3TcpTimers timers = ns3_tcp_timers(topology);
  return {{"min_rto_ms", timers.min_rto_s * 1000},
          {"clock_granularity_ms", timers.clock_granularity_s * 1000},
          {"delayed_ack_timeout_ms", timers.delayed_ack_timeout_s * 1000},
          {"from", topology.rto_min_ms > 0 ? "links.rto_min_ms (Linux's rule)" : "ns-3's defaults"}};
}

}  // namespace

ComputeModelConfig priced_for(const ComputeModelConfig& base, const train::TrainConfig& train) {
  ComputeModelConfig compute = base;
  compute.model = train.model;
  compute.model_file = train.model_file;
  compute.model_flops = train.model_flops;
  compute.batch = static_cast<double>(train.batch_per_worker);
  compute.compressor = train.options ? train.options->cpu_compressor() : "";
  const train::DataShape shape = train::dataset_shape(train);
  compute.channels = shape.channels, compute.height = shape.height, compute.width = shape.width;
  compute.classes = shape.classes;
  return compute;
}

namespace {

// ns-3's simulator is one per process: a second backend alive at the same
// time would share the first one's event queue (and its Destroy would wipe
// it). The lease makes that an error instead; it is released when the
// backend goes, or when its constructor fails.
class SimulatorLease {
 public:
  SimulatorLease() {
    if (taken().exchange(true))
      throw std::logic_error(
          "sim backend: another sim backend is still alive in this process (ns-3's simulator is process-wide); "
          "destroy it before creating the next");
  }
  ~SimulatorLease() { taken() = false; }
  SimulatorLease(const SimulatorLease&) = delete;
  SimulatorLease& operator=(const SimulatorLease&) = delete;

 private:
  static std::atomic<bool>& taken() {
    static std::atomic<bool> flag{false};
    return flag;
  }
};

void check_timing_is_priced(const ComputeModelConfig& compute, const train::TrainConfig& train) {
  if (train.math == "timing" && !prices_modelled_hardware(compute))
    throw std::invalid_argument(
        "math: timing skips the forward and backward math, so the measured compute model would charge nothing "
        "for them: use compute.model profile or analytic");
}

class SimNodeHost final : public train::NodeHost {
 public:
  SimNodeHost(const SimRunConfig& config, const train::TrainConfig& train) : config_(config) {
    const ComputeModelConfig compute = priced_for(config.compute.compute, train);
    check_timing_is_priced(compute, train);
    // Backends in sequence each start from a clean slate (lease_ refuses
    // two at once).
    ns3::Simulator::Destroy();
    ns3::RngSeedManager::SetSeed(static_cast<uint32_t>(config.topology.seed % 0xffffffffu) + 1);
    network_ = make_sim_wan(config.topology);
    executor_ = make_sim_executor(make_compute_model(compute), config.compute.executor);
  }

  ~SimNodeHost() override {
    network_.reset();
    executor_.reset();
    ns3::Simulator::Destroy();
  }

  std::string name() const override { return "sim"; }
  int world_size() const override { return network_->world_size(); }
  std::vector<int> local_ranks() const override {
    std::vector<int> ranks;
    for (int r = 0; r < world_size(); ++r) ranks.push_back(r);
    return ranks;
  }
  runtime::Executor& executor() override { return *executor_; }
  comm::Transport& transport(int node) override { return network_->transport(node); }
  bool wall_clock() const override { return false; }
  // The simulation ends with run_until; closing the transports is all that
  // stops (the executor is this host's and goes with it).
  void stop() override {
    for (int r = 0; r < world_size(); ++r) network_->transport(r).close();
  }

  nlohmann::json manifest() const override {
    const auto& t = config_.topology;
    const auto& plan = network_->plan();
    nlohmann::json clusters = nlohmann::json::array();
    for (const auto& c : t.clusters) clusters.push_back({{"name", c.name}, {"nodes", c.nodes}});
    nlohmann::json wan = nlohmann::json::object();
    for (const auto& [key, direction] : t.wan)
      wan[net::direction_name(t, key.first, key.second)] = describe_direction(direction);
    nlohmann::json manifest = {{"backend", "sim"},
            {"transport", "sim"},
            {"sim_config", config_.source},
            {"simulator", network_->model() == net::NetworkModel::flow
                              ? "flow-level model (sim/flow) on ns-3 " ST_NS3_VERSION "'s event loop"
                              : "ns-3 " ST_NS3_VERSION},
            {"compute_time_model", executor_->compute_model().describe()},
            {"deterministic", executor_->compute_model().deterministic()},
            {"cpu_cores_per_node", cpu_cores_per_node()},
            {"cpu_cores_from", cpu_cores_from()},
            {"topology",
             {{"clusters", clusters}, {"lan", {{"mbps", t.lan_mbps}, {"delay_ms", t.lan_delay_ms}}}, {"wan", wan}}},
            {"network",
             {{"mtu", plan.mtu},
              {"mtu_automatic", plan.mtu_automatic},
              {"segment_bytes", plan.segment_bytes},
              {"packets_in_flight", plan.packets_in_flight},
              {"socket_buffer_bytes", plan.socket_buffer_bytes},
              {"tcp_timers", timers_of(t)}}}};
    // Named only for the flow model, so packet-level manifests stay as they were.
    if (network_->model() != net::NetworkModel::packet)
      manifest["network"]["model"] = net::network_model_name(network_->model());
    return manifest;
  }

  nlohmann::json finish(const std::string& dir) override {
    const double until = network_->now_s();
    uint64_t wire = 0, payload = 0;
    nlohmann::json links = nlohmann::json::object();
    for (const auto& totals : network_->wan_totals()) {
      wire += totals.wire_bytes;
      payload += totals.payload_bytes;
      links[totals.link] = {{"wire_bytes", totals.wire_bytes}, {"payload_bytes", totals.payload_bytes}};
    }
    if (!dir.empty()) {
      network_->write_link_csv((std::filesystem::path(dir) / "link.csv").string());
      const auto path = std::filesystem::path(dir) / "host_cost.json";
      std::ofstream(path) << host_cost().dump(2) << "\n";
    }
    return {{"simulated_s", until}, {"wan_bytes", wire}, {"wan_payload_bytes", payload}, {"wan_links", links}};
  }

  nlohmann::json host_cost() const override {
    const HostCost c = executor_->host_cost();
    return {{"wall_s", c.run_s},
            {"compute_wall_s", c.compute_s},
            {"engine_tasks_wall_s", c.tasks_s},
            {"simulator_wall_s", c.simulator_s()},
            {"simulated_s", c.simulated_s},
            {"simulated_s_per_wall_s", c.run_s > 0 ? c.simulated_s / c.run_s : 0.0},
            // The wall times depend on it (core/runtime/freed_memory.h).
            {"malloc", runtime::malloc_setting()}};
  }

 private:
  // One entry per node: with per-node profiles (unequal clusters) the
  // modelled machines can have different core counts.
  nlohmann::json cpu_cores_per_node() const {
    nlohmann::json cores = nlohmann::json::array();
    for (int node = 0; node < world_size(); ++node) cores.push_back(executor_->cpu_cores(node));
    return cores;
  }
  nlohmann::json cpu_cores_from() const {
    nlohmann::json sources = nlohmann::json::array();
    for (int node = 0; node < world_size(); ++node) sources.push_back(executor_->cpu_cores_source(node));
    return sources;
  }

  SimulatorLease lease_;  // first: taken before, released after everything else
  SimRunConfig config_;
  std::unique_ptr<SimWan> network_;
  std::unique_ptr<SimExecutor> executor_;
};

}  // namespace

std::unique_ptr<train::NodeHost> make_sim_node_host(const SimRunConfig& config, const train::TrainConfig& train) {
  return std::make_unique<SimNodeHost>(config, train);
}

SimBackend::SimBackend(SimRunConfig config) : config_(std::move(config)) {
  try {
    (void)plan_sim_network(config_.topology);
  } catch (const std::exception& e) {
    throw std::invalid_argument(
        fmt::format("{}: links: the sim backend cannot build this network: {}", config_.source, e.what()));
  }
}

void SimBackend::check(const train::TrainConfig& config) const {
  Backend::check(config);
  check_timing_is_priced(priced_for(config_.compute.compute, config), config);
}

train::TrainResult SimBackend::train(const train::TrainConfig& config) {
  check(config);
  SimRunConfig run = config_;
  run.topology.trace_offset_s = config.trace_offset_s;  // the run's own stretch of the traces
  const auto host = make_sim_node_host(run, config);
  return train::run_training(config, *host);
}

}  // namespace st::sim
