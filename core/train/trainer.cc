#include "core/train/trainer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "core/collective/communicator.h"
#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"
#include "core/comm/rendezvous.h"
#include "core/data/cifar10.h"
#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/synthetic.h"
#include "core/model/local_training.h"
#include "core/runtime/executor.h"
#include "core/runtime/timeline.h"
#include "core/telemetry/timeline_transport.h"
#include "core/runtime/stop_request.h"
#include "core/telemetry/metered_transport.h"
#include "core/train/backend.h"
#include "core/train/control_agent.h"
#include "core/train/gloo_training.h"
#include "core/train/local_workers.h"
#include "core/train/system.h"
#include "core/train/versioned_parameters.h"

namespace st::train {
namespace {

std::unique_ptr<data::Dataset> load_dataset(const TrainConfig& c, data::Split split) {
  if (c.dataset == "fashion-mnist") {
    if (c.data_dir.empty()) return data::load_fashion_mnist(split);
    return data::load_fashion_mnist(split, c.data_dir);
  }
  if (c.dataset == "cifar10") {
    if (c.data_dir.empty()) return data::load_cifar10(split);
    return data::load_cifar10(split, c.data_dir);
  }
  data::SyntheticOptions options;
  options.seed = c.seed;
  options.channels = c.synthetic_channels;
  options.height = c.synthetic_height;
  options.width = c.synthetic_width;
  options.classes = c.synthetic_classes;
  return data::make_synthetic_dataset(options, split);
}

nlohmann::json manifest_of(const TrainConfig& c, Backend* backend) {
  nlohmann::json m = {{"system", c.system},
          {"model", c.model},
          {"dataset", c.dataset},
          {"nodes", c.nodes},
          {"gpus_per_node", c.gpus_per_node},
          {"compute_device", c.compute_device},
          {"batch_per_worker", c.batch_per_worker},
          {"iterations", c.iterations},
          {"optimizer",
           {{"name", "sgd"},
            {"lr", c.lr},
            {"momentum", c.momentum},
            {"weight_decay", c.weight_decay},
            {"warmup_iterations", c.warmup_iterations},
            {"lazy_momentum", c.lazy_momentum},
            {"momentum_at", c.momentum_at},
            {"momentum_masking", c.momentum_masking}}},
          {"density", c.density},
          {"compressor", c.compressor},
          {"staleness", c.staleness},
          {"staleness_compensation", c.staleness_compensation},
          {"controller", c.controller ? nlohmann::json{{"interval_s", c.control.interval_s},
                                                         {"min_density", c.control.min_density},
                                                         {"max_density", c.control.max_density},
                                                         {"safety", c.control.safety},
                                                         {"adapt_batch", c.control.adapt_batch},
                                                         {"growth", c.control.estimator.growth},
                                                         {"initial_mbps", c.control.estimator.initial_mbps}}
                                      : nlohmann::json("off")},
          {"dc_lambda", c.dc_lambda},
          {"value_encoding", c.fp16_values ? "f16" : "f32"},
          {"seed", c.seed},
          {"backend", "real"},
          {"transport", c.transport},
          {"compute_time_model", "measured (wall clock)"},
          {"eval", {{"interval", c.eval_interval}, {"samples", c.eval_samples}}}};
  if (c.system == "local-sgd")
    m["local_sgd"] = {{"averaging_period", c.averaging_period}, {"start_iteration", c.local_sgd_start_iteration}};
  if (c.system == "cloudless-ma")
    m["cloudless_ma"] = {{"averaging_period", c.averaging_period},
                         {"averaging_period_s", c.averaging_period_s},
                         {"overlap", c.averaging_overlap}};
  if (c.system == "cloudless-asgd-ga")
    m["cloudless_asgd_ga"] = {{"accumulation_steps", c.accumulation_steps}, {"max_staleness", c.max_staleness}};
  if (c.system == "ddp-powersgd")
    m["powersgd"] = {{"rank", c.powersgd_rank},
                     {"start_iteration", c.powersgd_start_iteration},
                     {"error_feedback", c.powersgd_error_feedback},
                     {"warm_start", c.powersgd_warm_start}};
  if (c.system == "ddp-gloo") m["comm_hook"] = c.comm_hook;
  if (backend) {
    m["backend"] = backend->name();
    m["transport"] = backend->name();
    m.erase("compute_time_model");
    m.update(backend->manifest());
  }
  return m;
}

// One node run in this process.
struct Node {
  comm::Transport* transport = nullptr;
  std::unique_ptr<comm::Transport> owned_transport;
  std::unique_ptr<telemetry::TimelineTransport> timed;    // with a timeline: records each send
  std::unique_ptr<telemetry::MeteredTransport> metered;  // with the controller: counts bytes per peer
  std::unique_ptr<comm::Mailbox> mailbox;
  std::unique_ptr<collective::Communicator> comm;
  std::unique_ptr<LocalWorkers> workers;
  std::unique_ptr<VersionedParameters> master;
  std::unique_ptr<ControlAgent> control;
  std::unique_ptr<NodeContext> context;
  std::unique_ptr<System> system;
  std::atomic<bool> finished{false};
};

// Node 0's view of the run: evaluations and progress lines.
class Monitor {
 public:
  Monitor(const TrainConfig& c, runtime::Executor& ex, const data::Dataset& test, ResultsWriter& results)
      : config_(c), executor_(ex), test_(test), results_(results) {}

  void iteration_done(Node& node, int t, const IterationRecord& r) {
    results_.add_iteration(r);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      iteration_ms_sum_ += r.iteration_ms;
      pipeline_ms_sum_ += r.pipeline_ms;
      compute_ms_sum_ += r.forward_ms + r.backward_ms + r.gather_ms + r.compress_ms + r.exchange_ms + r.optimize_ms;
      bytes_sent_ += r.bytes_sent;
      ++iterations_;
    }
    const int done = t + 1;
    const int every = std::max(1, config_.iterations / 20);
    if (!config_.quiet && (done % every == 0 || done == config_.iterations))
      spdlog::info("{} node 0: iteration {}/{} loss {:.4f} iteration {:.1f} ms", config_.system, done,
                   config_.iterations, r.loss, r.iteration_ms);
    if (config_.math == "full" && config_.eval_interval > 0 && done % config_.eval_interval == 0 &&
        done < config_.iterations)
      evaluate_async(node, done);
  }

  // `at`: the executor clock when the run ended (the executor may be gone).
  void evaluate_now(Node& node, int iteration, runtime::Nanos at) { record(node, iteration, node.master->snapshot(), at); }

  int completed_iterations() const { return iterations_; }

  bool idle() const { return pending_ == 0; }
  std::vector<EvalRecord> evaluations() {
    std::lock_guard<std::mutex> lock(mutex_);
    return evaluations_;
  }
  double mean_iteration_ms() const { return iterations_ ? iteration_ms_sum_ / iterations_ : 0; }
  double mean_pipeline_ms() const { return iterations_ ? pipeline_ms_sum_ / iterations_ : 0; }
  double mean_compute_ms() const { return iterations_ ? compute_ms_sum_ / iterations_ : 0; }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  void evaluate_async(Node& node, int iteration) {
    ++pending_;
    auto params = std::make_shared<std::vector<std::vector<float>>>(node.master->snapshot());
    const auto taken = executor_.now();
    executor_.compute([this, &node, iteration, params, taken] { record(node, iteration, *params, taken); },
                      runtime::ComputeCost{"evaluate", -1, static_cast<double>(config_.eval_samples)},
                      [this] { --pending_; });
  }

  void record(Node& node, int iteration, const std::vector<std::vector<float>>& params, runtime::Nanos taken) {
    const auto a = node.workers->evaluate(params, test_, config_.eval_samples);
    EvalRecord e{std::chrono::duration<double>(taken).count(), iteration, a.accuracy, a.loss, a.samples};
    results_.add_eval(e);
    if (!config_.quiet)
      spdlog::info("{} node 0: iteration {} test accuracy {:.2f}% ({} samples)", config_.system, iteration,
                   100 * a.accuracy, a.samples);
    std::lock_guard<std::mutex> lock(mutex_);
    evaluations_.push_back(e);
    std::sort(evaluations_.begin(), evaluations_.end(),
              [](const EvalRecord& x, const EvalRecord& y) { return x.iteration < y.iteration; });
  }

  const TrainConfig& config_;
  runtime::Executor& executor_;
  const data::Dataset& test_;
  ResultsWriter& results_;
  std::mutex mutex_;
  std::atomic<int> pending_{0};
  std::vector<EvalRecord> evaluations_;
  double iteration_ms_sum_ = 0, pipeline_ms_sum_ = 0, compute_ms_sum_ = 0;
  uint64_t bytes_sent_ = 0;
  int iterations_ = 0;
};

// The node's agent; rank 0's holds the controller, priced for this model's
// layers and the wire encoding the exchange will use.
std::unique_ptr<ControlAgent> make_control_agent(const TrainConfig& c, int rank, Node& node, runtime::Executor& executor,
                                                 ResultsWriter& results) {
  const std::vector<int> even(static_cast<std::size_t>(c.gpus_per_node), static_cast<int>(c.batch_per_worker));
  std::unique_ptr<control::Controller> controller;
  if (rank == 0) {
    control::TrafficModel traffic{node.workers->layer_numels(), c.compressor == "thresholdv16", c.fp16_values, c.nodes};
    controller = std::make_unique<control::Controller>(
        c.control, traffic, std::vector<std::vector<int>>(static_cast<std::size_t>(c.nodes), even), c.density,
        c.staleness);
  }
  return std::make_unique<ControlAgent>(rank, c.nodes, executor, *node.metered, *node.mailbox, std::move(controller),
                                        c.density, even, rank == 0 ? &results : nullptr);
}

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

std::string results_dir(const TrainConfig& c) {
  if (c.out_dir.empty() || c.transport == "inproc" || c.rank == 0) return c.out_dir;
  return c.out_dir + "/rank" + std::to_string(c.rank);  // other processes of a TCP run
}

// What an interrupted run leaves: the iterations and evaluations written so
// far, and a summary that says it stopped early (no final evaluation: the
// user asked to stop).
template <typename Nodes>
TrainResult finish_interrupted(ResultsWriter& results, Monitor& monitor, Nodes& nodes, int signal, TrainResult result,
                               runtime::Nanos duration) {
  for (auto& node : nodes) result.checksums.push_back(node->master->checksum());
  result.evaluations = monitor.evaluations();
  result.mean_iteration_ms = monitor.mean_iteration_ms();
  result.bytes_sent = monitor.bytes_sent();
  result.interrupted_by = signal;
  results.update_manifest({{"summary",
                            {{"interrupted", fmt::format("interrupted by signal {}", signal)},
                             {"complete", false},
                             {"duration_s", std::chrono::duration<double>(duration).count()},
                             {"iterations_completed", monitor.completed_iterations()},
                             {"checksums", result.checksums}}}});
  return result;
}

}  // namespace

TrainResult run_training(const TrainConfig& config, Backend* backend) {
  validate(config);
  if (backend && backend->nodes() != config.nodes)
    throw std::invalid_argument(fmt::format("nodes: the {} backend has {} node(s) but the run asks for {}",
                                            backend->name(), backend->nodes(), config.nodes));
  if (!backend && config.math == "timing")
    throw std::invalid_argument("math: timing runs need the sim backend (its compute model prices the skipped math)");
  if (backend && config.system == "ddp-gloo")
    throw std::invalid_argument(fmt::format("system: ddp-gloo runs only on real networks, not on the {} backend "
                                            "(use ddp: the same ring algorithm on the engine's transport)",
                                            backend->name()));
  model::ThreadCountGuard one_torch_thread(1);
  const auto train = load_dataset(config, data::Split::kTrain);
  const auto test = load_dataset(config, data::Split::kTest);
  const int threads = config.executor_threads > 0
                          ? config.executor_threads
                          : std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  ResultsWriter results(results_dir(config), manifest_of(config, backend));
  if (config.system == "ddp-gloo") {
    auto result = run_gloo_training(config, *train, *test, results);
    results.update_manifest({{"summary", {{"wall_s", result.wall_s}, {"checksums", result.checksums}}}});
    return result;
  }
  // With a timeline, every engine task and send goes through recording
  // decorators (the backend's own executor and transports stay as they are).
  // Declared before the pool: its threads join first, so no task still
  // running can reach a destroyed timeline.
  runtime::Timeline timeline;
  std::unique_ptr<runtime::TimelineExecutor> timed_executor;
  std::unique_ptr<runtime::Executor> owned_executor;
  if (!backend) owned_executor = runtime::make_thread_pool_executor(threads);
  runtime::Executor* executor = backend ? &backend->executor() : owned_executor.get();
  if (config.timeline) {
    timed_executor = std::make_unique<runtime::TimelineExecutor>(*executor, timeline);
    executor = timed_executor.get();
  }

  std::unique_ptr<comm::InProcFabric> fabric;
  std::vector<int> local_ranks;
  if (backend) {
    for (int r = 0; r < config.nodes; ++r) local_ranks.push_back(r);
  } else if (config.transport == "inproc") {
    comm::LinkDelay delay;
    delay.latency = std::chrono::nanoseconds(static_cast<int64_t>(config.inproc_latency_ms * 1e6));
    delay.bytes_per_second = config.inproc_bandwidth_mbps * 1e6 / 8;
    fabric = std::make_unique<comm::InProcFabric>(config.nodes, delay);
    for (int r = 0; r < config.nodes; ++r) local_ranks.push_back(r);
  } else {
    local_ranks.push_back(config.rank);
  }

  Monitor monitor(config, *executor, *test, results);
  std::vector<std::unique_ptr<Node>> nodes;
  for (int rank : local_ranks) {
    auto node = std::make_unique<Node>();
    if (backend) {
      node->transport = &backend->transport(rank);
    } else if (fabric) {
      node->transport = &fabric->endpoint(rank);
    } else {
      node->owned_transport = comm::make_tcp_transport(tcp_options(config));
      node->transport = node->owned_transport.get();
    }
    comm::Transport* wire = node->transport;
    if (config.timeline) {
      node->timed = std::make_unique<telemetry::TimelineTransport>(*wire, *executor, timeline);
      wire = node->timed.get();
    }
    if (config.controller) {
      node->metered = std::make_unique<telemetry::MeteredTransport>(*wire, *executor);
      wire = node->metered.get();
    }
    node->mailbox = std::make_unique<comm::Mailbox>(*wire);
    node->comm = std::make_unique<collective::Communicator>(*wire, *node->mailbox, *executor);
    node->workers = std::make_unique<LocalWorkers>(config, rank, *train, *executor);
    node->master = std::make_unique<VersionedParameters>(*executor, node->workers->initial_parameters());
    if (config.controller) node->control = make_control_agent(config, rank, *node, *executor, results);
    Node* raw = node.get();
    // A process that is one rank of a TCP run records its own iterations
    // too (rank<R>/iterations.csv), so every rank's timing can be read back.
    const bool only_rank_here = !backend && config.transport == "tcp";
    auto on_done = [&monitor, &results, raw, rank, only_rank_here](int t, const IterationRecord& r) {
      if (rank == 0) monitor.iteration_done(*raw, t, r);
      else if (only_rank_here) results.add_iteration(r);
    };
    node->context.reset(new NodeContext{config, rank, *executor, *node->comm, *node->workers, *node->master,
                                        results, on_done, node->control.get()});
    node->system = make_system(*node->context);
    nodes.push_back(std::move(node));
  }

  if (!config.quiet)
    spdlog::info("training {} on {}: {} node(s) x {} worker(s), {} iterations, {} {}", config.system, config.model,
                 config.nodes, config.gpus_per_node, config.iterations, backend ? "backend" : "transport",
                 backend ? backend->name() : config.transport);
  TrainResult result;
  const auto start = executor->now();
  for (auto& node : nodes) {
    if (node->control) node->control->start();
    Node* raw = node.get();
    executor->post([raw] { raw->system->start([raw] { raw->finished = true; }); });
  }
  const runtime::Nanos budget(static_cast<int64_t>(config.time_budget_s * 1e9));
  bool out_of_time = false;
  int interrupted_by = 0;
  // Stops every source of callbacks before the nodes go away: first the
  // network, then the pool (it joins its threads and drops queued tasks), so
  // that no task still running can touch a destroyed node.
  auto stop_everything = [&] {
    for (auto& node : nodes) node->transport->close();
    owned_executor.reset();
  };
  try {
    executor->run_until([&] {
      if ((interrupted_by = runtime::stop_requested()) != 0) return true;
      if (budget.count() > 0 && executor->now() - start >= budget) return out_of_time = true;
      for (auto& node : nodes)
        if (!node->finished) return false;
      return monitor.idle();
    });
  } catch (...) {
    stop_everything();
    throw;
  }
  const runtime::Nanos ended = executor->now();
  result.wall_s = std::chrono::duration<double>(ended - start).count();
  if (out_of_time) {
    if (!config.quiet) spdlog::info("{}: time budget of {} s reached", config.system, config.time_budget_s);
    stop_everything();
  }
  if (interrupted_by != 0) {
    spdlog::warn("{}: interrupted by signal {}: stopped after {} iteration(s); results so far are kept", config.system,
                 interrupted_by, monitor.completed_iterations());
    stop_everything();
    return finish_interrupted(results, monitor, nodes, interrupted_by, result, ended - start);
  }

  Node& first = *nodes.front();
  // A timing run has no accuracy: it is absent, never invented.
  if (first.context->rank == 0 && config.math == "full")
    monitor.evaluate_now(first, out_of_time ? monitor.completed_iterations() : config.iterations, ended);
  for (auto& node : nodes) result.checksums.push_back(node->master->checksum());
  result.final_parameters = first.master->snapshot();
  result.evaluations = monitor.evaluations();
  result.mean_iteration_ms = monitor.mean_iteration_ms();
  result.mean_pipeline_ms = monitor.mean_pipeline_ms();
  result.mean_compute_ms = monitor.mean_compute_ms();
  result.bytes_sent = monitor.bytes_sent();
  // duration_s is on the executor's clock: wall seconds for real runs,
  // simulated seconds for the sim backend (whose host cost goes elsewhere,
  // so the results files stay deterministic).
  nlohmann::json summary = {{"duration_s", result.wall_s},
                            {"mean_iteration_ms", result.mean_iteration_ms},
                            {"checksums", result.checksums}};
  if (!backend) summary["wall_s"] = result.wall_s;
  if (out_of_time) summary["stopped_by_time_budget"] = true;
  summary["math"] = config.math;
  summary["iterations_completed"] = monitor.completed_iterations();
  summary["global_batch"] = static_cast<double>(config.nodes * config.gpus_per_node) *
                            static_cast<double>(config.batch_per_worker);
  if (!result.evaluations.empty()) summary["final_accuracy"] = result.evaluations.back().accuracy;
  if (!out_of_time) {
    const auto stats = first.system->stats();
    if (!stats.empty()) summary["system_stats"] = stats;
  }
  if (backend) summary.update(backend->finish(results_dir(config)));
  if (config.timeline) {
    const std::string path = results_dir(config) + "/timeline.json";
    timeline.write_chrome_trace(path);
    summary["timeline"] = {{"file", "timeline.json"}, {"spans", timeline.size()}, {"dropped_spans", timeline.dropped()}};
    if (!config.quiet) spdlog::info("{}: timeline of {} spans in {}", config.system, timeline.size(), path);
  }
  results.update_manifest({{"summary", summary}});
  if (!out_of_time)
    for (auto& node : nodes) node->transport->close();
  return result;
}

}  // namespace st::train
