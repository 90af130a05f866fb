#include "core/train/run/real_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "core/comm/inproc_transport.h"
#include "core/comm/rendezvous.h"
#include "core/train/config.h"
#include "core/train/run/trainer.h"

namespace st::train {

namespace {

comm::TcpOptions tcp_options(const TrainConfig& c) {
  comm::TcpOptions o;
  o.rank = c.rank;
  o.world_size = c.nodes;
  o.master_addr = c.master_addr;
  o.master_port = static_cast<uint16_t>(c.master_port);
  o.listen_host = c.listen_host;
  o.advertise_host = c.advertise_host;
  o.peer_timeout = std::chrono::milliseconds(static_cast<int64_t>(c.peer_timeout_s * 1000));
  o.connect_timeout = std::max(o.connect_timeout, o.peer_timeout);
  return o;
}

class RealNodeHost final : public NodeHost {
 public:
  explicit RealNodeHost(const TrainConfig& config) : config_(config) {}

  std::string name() const override { return "real"; }
  int world_size() const override { return config_.nodes; }
  std::vector<int> local_ranks() const override {
    if (config_.transport == "tcp") return {config_.rank};
    std::vector<int> ranks;
    for (int r = 0; r < config_.nodes; ++r) ranks.push_back(r);
    return ranks;
  }

  runtime::Executor& executor() override {
    if (!pool_) {
      const int threads = config_.executor_threads > 0
                              ? config_.executor_threads
                              : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
      pool_ = runtime::make_thread_pool_executor(threads);
    }
    return *pool_;
  }

  comm::Transport& transport(int rank) override {
    if (config_.transport == "tcp") {
      if (rank != config_.rank)
        throw std::logic_error(fmt::format("real backend: this process is rank {}, not {}", config_.rank, rank));
      if (!tcp_) tcp_ = comm::make_tcp_transport(tcp_options(config_));
      return *tcp_;
    }
    if (!fabric_) {
      comm::LinkDelay delay;
      delay.latency = std::chrono::nanoseconds(static_cast<int64_t>(config_.inproc_latency_ms * 1e6));
      delay.bytes_per_second = config_.inproc_bandwidth_mbps * 1e6 / 8;
      fabric_ = std::make_unique<comm::InProcFabric>(config_.nodes, delay);
    }
    return fabric_->endpoint(rank);
  }

  bool wall_clock() const override { return true; }

  nlohmann::json manifest() const override {
    return {{"backend", "real"}, {"transport", config_.transport}, {"compute_time_model", "measured (wall clock)"}};
  }

  nlohmann::json finish(const std::string&) override { return nlohmann::json::object(); }

  void stop() override {
    if (tcp_) tcp_->close();
    // shutdown() fails the sends still in flight, runs their callbacks on
    // the fabric's thread and joins it, all before returning. Closing the
    // endpoints alone left that thread running those callbacks after the
    // nodes were gone (a collective's completion touching a destroyed
    // communicator: a crash on 5 of 27 interrupted runs under load).
    if (fabric_) fabric_->shutdown();
    pool_.reset();  // joins its threads, drops queued tasks
  }

 private:
  const TrainConfig& config_;
  std::unique_ptr<runtime::Executor> pool_;
  std::unique_ptr<comm::InProcFabric> fabric_;
  std::unique_ptr<comm::Transport> tcp_;
};

}  // namespace

std::unique_ptr<NodeHost> make_real_node_host(const TrainConfig& config) {
  return std::make_unique<RealNodeHost>(config);
}

TrainResult RealBackend::train(const TrainConfig& config) {
  check(config);
  const auto host = make_real_node_host(config);
  return run_training(config, *host);
}

}  // namespace st::train
