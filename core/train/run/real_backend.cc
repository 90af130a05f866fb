#include "core/train/run/real_backend.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "core/comm/inproc_transport.h"
#include "core/comm/rendezvous.h"
#include "core/runtime/paced_executor.h"
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

double late_share(const runtime::PacingCounts& c) {
  return c.tasks ? static_cast<double>(c.late_tasks) / static_cast<double>(c.tasks) : 0.0;
}

nlohmann::json pacing_json(const runtime::PacingCounts& c) {
  return {{"tasks", c.tasks},       {"late_tasks", c.late_tasks}, {"late_share", late_share(c)},
          {"worst_late_ms", c.worst_late_ms}, {"priced_s", c.priced_s}, {"work_s", c.work_s}};
}

void warn_if_pacing_failed(const runtime::PacingStats& stats) {
  if (late_share(stats) <= runtime::kLateShareThatBreaksPacing) return;
  std::string worst;
  double worst_late = -1;
  for (int kind = 0; kind < runtime::kTaskKinds; ++kind)
    if (stats.by_kind[kind].late_tasks > 0 && late_share(stats.by_kind[kind]) > worst_late) {
      worst_late = late_share(stats.by_kind[kind]);
      worst = runtime::to_string(static_cast<runtime::TaskKind>(kind));
    }
  spdlog::warn(
      "paced compute did not hold: {} of {} compute tasks ended over {} ms after their priced time (worst {:.1f} "
      "ms late; most often {}): this host's real work did not keep to the modelled hardware's times, so "
      "iterations may be longer than the model's (a smaller --stage-sample, fewer nodes per host, or fewer "
      "workers help); summary.pacing in manifest.json has the counts per task kind",
      stats.late_tasks, stats.tasks, std::chrono::duration_cast<std::chrono::milliseconds>(runtime::kPacingTolerance).count(),
      stats.worst_late_ms, worst);
}

class RealNodeHost final : public NodeHost {
 public:
  RealNodeHost(const TrainConfig& config, const RealPacing& pacing) : config_(config) {
    // Only a timing run is paced: full math is measured as it runs.
    if (pacing && config.math == "timing") {
      pacing_model_ = pacing.model_for(config);
      pacing_cores_ = pacing.cpu_cores;
    }
  }

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
      if (pacing_model_) {
        auto paced = runtime::make_paced_executor(std::move(pool_), pacing_model_, pacing_cores_);
        paced_ = paced.get();
        pool_ = std::move(paced);
      }
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
    nlohmann::json manifest = {{"backend", "real"}, {"transport", config_.transport}};
    if (!pacing_model_) {
      manifest["compute_time_model"] = "measured (wall clock)";
      return manifest;
    }
    manifest["compute_time_model"] = pacing_model_->describe();
    manifest["compute_paced"] = true;  // the wall clock takes the model's prices (core/runtime/paced_executor.h)
    nlohmann::json cores = nlohmann::json::array();
    for (int rank : local_ranks()) cores.push_back(runtime::cpu_slots(*pacing_model_, pacing_cores_, rank));
    manifest["cpu_cores_per_node"] = cores;
    return manifest;
  }

  // A paced run says whether its pacing held: tasks whose real work ran
  // past their price made the run slower than the model. Per task kind too,
  // so a reader sees which stage this host could not keep up with.
  nlohmann::json finish(const std::string&) override {
    if (!paced_) return nlohmann::json::object();
    const auto stats = paced_->stats();
    nlohmann::json pacing = pacing_json(stats);
    for (int kind = 0; kind < runtime::kTaskKinds; ++kind)
      if (stats.by_kind[kind].tasks > 0)
        pacing["by_kind"][runtime::to_string(static_cast<runtime::TaskKind>(kind))] = pacing_json(stats.by_kind[kind]);
    warn_if_pacing_failed(stats);
    return {{"pacing", pacing}};
  }

  void stop() override {
    if (tcp_) tcp_->close();
    // shutdown() fails the sends still in flight, runs their callbacks on
    // the fabric's thread and joins it, all before returning. Closing the
    // endpoints alone left that thread running those callbacks after the
    // nodes were gone (a collective's completion touching a destroyed
    // communicator: a crash on 5 of 27 interrupted runs under load).
    if (fabric_) fabric_->shutdown();
    paced_ = nullptr;
    pool_.reset();  // joins its threads, drops queued tasks
  }

 private:
  const TrainConfig& config_;
  std::shared_ptr<const runtime::ComputeTimeModel> pacing_model_;  // null: compute is measured
  int pacing_cores_ = 0;
  std::unique_ptr<runtime::Executor> pool_;
  runtime::PacedExecutor* paced_ = nullptr;  // pool_ when paced
  std::unique_ptr<comm::InProcFabric> fabric_;
  std::unique_ptr<comm::Transport> tcp_;
};

}  // namespace

std::unique_ptr<NodeHost> make_real_node_host(const TrainConfig& config, const RealPacing& pacing) {
  return std::make_unique<RealNodeHost>(config, pacing);
}

TrainResult RealBackend::train(const TrainConfig& config) {
  check(config);
  const auto host = make_real_node_host(config, pacing_);
  return run_training(config, *host);
}

}  // namespace st::train
