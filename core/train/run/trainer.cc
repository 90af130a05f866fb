#include "core/train/run/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "core/collective/communicator.h"
#include "core/comm/mailbox.h"
#include "core/data/dataset.h"
#include "core/device/host_description.h"
#include "core/model/local_training.h"
#include "core/model/math_kernels.h"
#include "core/runtime/executor.h"
#include "core/runtime/timeline.h"
#include "core/telemetry/timeline_transport.h"
#include "core/runtime/stop_request.h"
#include "core/telemetry/metered_transport.h"
#include "core/train/run/node_host.h"
#include "core/train/run/run_end.h"
#include "core/train/system_registry.h"
#include "core/train/node/control_agent.h"
#include "core/train/node/local_workers.h"
#include "core/train/node/synthetic_gradients.h"
#include "core/train/run/sampled_cost_executor.h"
#include "core/train/run/training_clock.h"
#include "core/train/run/training_data.h"
#include "core/train/system.h"
#include "core/train/node/versioned_parameters.h"
#include "core/util/build_info.h"
#include "core/util/file_fingerprint.h"

namespace st::train {
namespace {

// What the run is: the settings every system shares, the system's own
// options (its table, system_options.h) and what the host adds (backend,
// transport, compute-time model, network).
nlohmann::json manifest_of(const TrainConfig& c, const NodeHost& host) {
  nlohmann::json m = {{"system", c.system},
                      {"options", c.options->to_json()},
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
                        {"warmup_iterations", c.warmup_iterations}}},
                      {"seed", c.seed},
                      {"trace_offset_s", c.trace_offset_s},
                      {"math_kernels", model::math_kernels()},
                      {"eval",
                       {{"on", c.evaluate_on},
                        {"interval", c.eval_interval},
                        {"samples", c.eval_samples},
                        {"interval_after", c.eval_interval_after},
                        {"dense_until", c.eval_dense_until}}}};
  // Only where clusters differ: runs of equal clusters keep their manifest.
  if (c.unequal_gpus()) m["node_gpus"] = c.node_gpus;
  // Likewise only where the data is placed by label.
  if (c.label_skew > 0) m["label_skew"] = c.label_skew;
  // Likewise only where a time budget stops the run: a system's own
  // `budget: {time_s}` sits under `systems`, which the kept-run check
  // (apps/run_keep.cc) compares through the manifest, not the file.
  if (c.time_budget_s > 0) m["time_budget_s"] = c.time_budget_s;
  if (!c.model_file.empty()) {
    const util::FileFingerprint file = util::fingerprint_file(c.model_file);
    m["model_file"] = {{"path", file.path}, {"bytes", file.bytes}, {"crc32", file.crc32}};
    if (c.model_flops > 0) m["model_flops"] = c.model_flops;
  }
  if (c.dataset == "npz") {
    const util::FileFingerprint file = util::fingerprint_file(c.data_file);
    m["dataset_file"] = {{"path", file.path}, {"bytes", file.bytes}, {"crc32", file.crc32}};
  }
  // Only where it is on: runs at full size keep the manifest they had.
  if (c.stage_sample.enabled())
    m["stage_sample"] = {{"fraction", c.stage_sample.fraction}, {"min_elements", c.stage_sample.min_elements}};
  // The machine it ran on (CPU model, and each GPU's name where it computes
  // on CUDA): runs paired across machines say so from their files.
  int local_workers = 0;  // the most on any node: the device indices every node's workers use
  for (int node = 0; node < c.nodes; ++node) local_workers = std::max(local_workers, c.gpus_of(node));
  m["machine"] = device::host_description(device::parse_compute_device(c.compute_device), local_workers);
  // And the code that ran (core/util/build_info.h): a run that does not
  // reproduce a recorded one then says whether the code or the machine moved.
  const util::BuildInfo& build = util::build_info();
  m["build"] = {{"commit", build.commit},
                {"modified", build.modified ? nlohmann::json(*build.modified) : nlohmann::json()}};
  m.update(host.manifest());
  return m;
}

// One node run in this process.
struct Node {
  comm::Transport* transport = nullptr;  // the host's
  // A rank of a run across processes: its word to the others at the end
  // (declared before the mailbox, whose receives point into it).
  std::unique_ptr<RunEndHandshake> run_end;
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
      compute_ms_sum_ += r.load_ms + r.forward_ms + r.backward_ms + r.gather_ms + r.compress_ms + r.exchange_ms + r.optimize_ms;
      bytes_sent_ += r.bytes_sent;
      ++iterations_;
    }
    const int done = t + 1;
    const bool bounded = config_.iterations < kUnboundedIterations;
    const int every = bounded ? std::max(1, config_.iterations / 20) : 100;
    if (!config_.quiet && (done % every == 0 || done == config_.iterations))
      spdlog::info("{} node 0: iteration {}{} loss {:.4f} iteration {:.1f} ms", config_.system, done,
                   bounded ? fmt::format("/{}", config_.iterations) : std::string(), r.loss, r.iteration_ms);
    const int interval = evaluation_interval();
    if (config_.math == "full" && interval > 0 && done % interval == 0 && done < config_.iterations)
      evaluate_async(node, done);
  }

  // Dense until the highest report target is reached, then sparse
  // (TrainConfig::eval_interval_after).
  int evaluation_interval() const {
    const bool after = config_.eval_interval_after > 0 && config_.eval_dense_until > 0 &&
                       best_accuracy_.load() >= config_.eval_dense_until;
    return after ? config_.eval_interval_after : config_.eval_interval;
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
                      runtime::ComputeCost{runtime::TaskKind::kEvaluate, -1, static_cast<double>(config_.eval_samples)},
                      [this] { --pending_; });
  }

  void record(Node& node, int iteration, const std::vector<std::vector<float>>& params, runtime::Nanos taken) {
    const auto a = node.workers->evaluate(params, test_, config_.eval_samples);
    EvalRecord e{std::chrono::duration<double>(taken).count(), iteration, a.accuracy, a.loss, a.samples};
    results_.add_eval(e);
    if (!config_.quiet)
      spdlog::info("{} node 0: iteration {} {} accuracy {:.2f}% ({} samples)", config_.system, iteration,
                   config_.evaluate_on,
                   100 * a.accuracy, a.samples);
    std::lock_guard<std::mutex> lock(mutex_);
    if (e.accuracy > best_accuracy_.load()) best_accuracy_ = e.accuracy;
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
  std::atomic<double> best_accuracy_{0};
  std::vector<EvalRecord> evaluations_;
  double iteration_ms_sum_ = 0, pipeline_ms_sum_ = 0, compute_ms_sum_ = 0;
  uint64_t bytes_sent_ = 0;
  int iterations_ = 0;
};

// The node's agent; rank 0's holds the controller, priced for this model's
// layers and the wire encoding the exchange will use (the full layers, when
// the stages run on samples: the wire carries full-size messages).
std::unique_ptr<ControlAgent> make_control_agent(const TrainConfig& c, const ControlledSystem& controlled, int rank,
                                                 Node& node, runtime::Executor& executor, ResultsWriter& results) {
  // Every GPU starts at the configured batch, on nodes of any size.
  auto even = [&c](int n) {
    return std::vector<int>(static_cast<std::size_t>(c.gpus_of(n)), static_cast<int>(c.batch_per_worker));
  };
  std::unique_ptr<control::Controller> controller;
  if (rank == 0) {
    control::TrafficModel traffic{node.workers->sampling().full_numels(), controlled.block_compressor, controlled.fp16_values,
                                  c.nodes, controlled.dense_up_to};
    std::vector<std::vector<int>> batches;
    for (int n = 0; n < c.nodes; ++n) batches.push_back(even(n));
    control::ControllerOptions options = *controlled.options;
    options.raised_density_iterations = controlled.raised_density_iterations;
    controller = std::make_unique<control::Controller>(options, traffic, batches, controlled.initial_density,
                                                       controlled.staleness);
  }
  return std::make_unique<ControlAgent>(rank, c.nodes, executor, *node.metered, *node.mailbox, std::move(controller),
                                        controlled.initial_density, even(rank), rank == 0 ? &results : nullptr,
                                        controlled.options->probe_at_start);
}

// Where this process writes: the run's folder, or, for a process that is
// one rank (not 0) of a TCP run, its own rank<R> subfolder.
std::string results_dir(const TrainConfig& c, const NodeHost& host) {
  if (c.out_dir.empty() || host.all_ranks_here() || c.rank == 0) return c.out_dir;
  return c.out_dir + "/rank" + std::to_string(c.rank);
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

// Rank 0 of a run across processes (it marks training's start for the
// emulator's trace).
static bool rank0_of_several(const NodeHost& host) {
  return !host.all_ranks_here() && host.local_ranks().front() == 0;
}

// A system that brings its own process group (ddp-gloo) trains the whole
// run itself; the host's executor and transports stay unused.
TrainResult run_own(const SystemDescriptor& system, const TrainConfig& config, const data::Dataset& train,
                    const data::Dataset& test, ResultsWriter& results) {
  auto result = system.run_own(config, train, test, results);
  results.update_manifest({{"summary", {{"wall_s", result.wall_s}, {"checksums", result.checksums}}}});
  return result;
}

TrainResult run_training(const TrainConfig& config, NodeHost& host) {
  validate(config);
  if (host.world_size() != config.nodes)
    throw std::invalid_argument(fmt::format("nodes: the {} backend has {} node(s) but the run asks for {}", host.name(),
                                            host.world_size(), config.nodes));
  const SystemDescriptor& system = system_named(config.system);
  require_real_network(system, host.name(), !host.wall_clock());
  const auto controlled = config.options->controlled();
  model::ThreadCountGuard one_torch_thread(1);
  // Training never sees the validation split; evaluations read the test
  // set, or the validation set for tuning (TrainConfig::evaluate_on).
  TrainingData data = load_training_data(config);
  const std::unique_ptr<data::Dataset> train = std::move(data.train);
  const std::unique_ptr<data::Dataset> test = std::move(data.evaluation);
  const std::string out_dir = results_dir(config, host);
  ResultsWriter results(out_dir, manifest_of(config, host));
  if (system.run_own) {
    if (rank0_of_several(host)) results.mark_training_started();
    return run_own(system, config, *train, *test, results);
  }
  // With a timeline, every engine task and send goes through recording
  // decorators (the host's own executor and transports stay as they are).
  // The host's pool joins its threads in stop(), before the timeline goes.
  runtime::Timeline timeline;
  std::unique_ptr<runtime::TimelineExecutor> timed_executor;
  runtime::Executor* executor = &host.executor();
  std::unique_ptr<TrainingClock> training_clock;
  if (host.wall_clock()) {
    training_clock = std::make_unique<TrainingClock>(*executor);
    executor = training_clock.get();
  }
  if (config.timeline) {
    timed_executor = std::make_unique<runtime::TimelineExecutor>(*executor, timeline);
    executor = timed_executor.get();
  }
  // Sampled stages: every node's tasks are charged at full size. The
  // gradients' pools (one per process) are made here, once, and the nodes'
  // workers find them shared.
  std::shared_ptr<const SyntheticGradients> synthetic;
  std::unique_ptr<SampledCostExecutor> sampled_executor;
  if (config.stage_sample.enabled()) {
    synthetic = SyntheticGradients::shared(config.model_spec(), *train, config.seed, config.stage_sample);
    sampled_executor = std::make_unique<SampledCostExecutor>(*executor, synthetic->sampling());
    executor = sampled_executor.get();
  }

  Monitor monitor(config, *executor, *test, results);
  std::vector<std::unique_ptr<Node>> nodes;
  // Stops every source of callbacks before the nodes go away (the host
  // closes the network, then joins its threads), so that no task still
  // running can touch a destroyed node or timeline.
  struct StopHost {
    NodeHost& host;
    bool stopped = false;
    void operator()() {
      if (!stopped) host.stop();
      stopped = true;
    }
    ~StopHost() { (*this)(); }
  } stop_everything{host};
  for (int rank : host.local_ranks()) {
    auto node = std::make_unique<Node>();
    node->transport = &host.transport(rank);
    comm::Transport* wire = node->transport;
    if (config.timeline) {
      node->timed = std::make_unique<telemetry::TimelineTransport>(*wire, *executor, timeline);
      wire = node->timed.get();
    }
    if (controlled) {
      node->metered = std::make_unique<telemetry::MeteredTransport>(*wire, *executor);
      wire = node->metered.get();
    }
    node->mailbox = std::make_unique<comm::Mailbox>(*wire);
    if (!host.all_ranks_here())
      node->run_end = std::make_unique<RunEndHandshake>(*wire, *node->mailbox, rank, config.nodes);
    node->comm = std::make_unique<collective::Communicator>(*wire, *node->mailbox, *executor);
    node->workers = std::make_unique<LocalWorkers>(config, rank, *train, *executor);
    node->master = std::make_unique<VersionedParameters>(*executor, node->workers->initial_parameters());
    if (controlled) node->control = make_control_agent(config, *controlled, rank, *node, *executor, results);
    Node* raw = node.get();
    // A process that is one rank of a TCP run records its own iterations
    // too (rank<R>/iterations.csv), so every rank's timing can be read back.
    const bool only_rank_here = !host.all_ranks_here();
    auto on_done = [&monitor, &results, raw, rank, only_rank_here](int t, const IterationRecord& r) {
      if (rank == 0) monitor.iteration_done(*raw, t, r);
      else if (only_rank_here) results.add_iteration(r);
    };
    node->context.reset(new NodeContext{config, rank, *executor, *node->comm, *node->workers, *node->master,
                                        results, on_done, node->control.get()});
    node->system = system.make(*node->context);
    nodes.push_back(std::move(node));
  }

  if (!config.quiet)
    spdlog::info("training {} on {}: {} node(s) x {} worker(s), {} iterations, backend {}; options {}", config.system,
                 config.model, config.nodes,
                 config.unequal_gpus() ? fmt::format("[{}]", fmt::join(config.node_gpus, ", ")) : std::to_string(config.gpus_per_node),
                 config.iterations < kUnboundedIterations ? std::to_string(config.iterations) : "unbounded",
                 host.name(), config.options->to_json().dump());
  TrainResult result;
  // Wall-clock runs count from here, as simulated ones do (training_clock.h);
  // across processes, rank 0's mark starts the emulator's trace.
  if (training_clock) training_clock->restart();
  if (rank0_of_several(host)) results.mark_training_started();
  const auto start = executor->now();
  for (auto& node : nodes) {
    Node* raw = node.get();
    auto begin_training = [executor, raw] {
      executor->post([raw] { raw->system->start([raw] { raw->finished = true; }); });
    };
    if (node->control) node->control->start(begin_training);
    else begin_training();
  }
  const runtime::Nanos budget(static_cast<int64_t>(config.time_budget_s * 1e9));
  bool out_of_time = false;
  int interrupted_by = 0;
  try {
    executor->run_until([&] {
      if ((interrupted_by = runtime::stop_requested()) != 0) return true;
      if (budget.count() > 0 && executor->now() - start >= budget) return out_of_time = true;
      for (auto& node : nodes)
        if (!node->finished) return false;
      if (!monitor.idle()) return false;
      // Across processes: done when every rank is (run_end.h).
      for (auto& node : nodes) {
        if (!node->run_end) continue;
        node->run_end->announce();
        if (!node->run_end->everyone_done()) return false;
      }
      return true;
    });
  } catch (const std::exception& error) {
    // A failed run (the simulator's deadlock watchdog, a lost peer) keeps
    // what explains it: the host's files up to the failure (link.csv), the
    // timeline, and the error in manifest.json. The error goes on.
    nlohmann::json kept = {{"error", error.what()}};
    try {
      kept["host"] = host.finish(out_dir);
    } catch (const std::exception& e) {
      kept["host_error"] = e.what();
    }
    stop_everything();  // no task adds spans while the timeline is written
    if (config.timeline && !out_dir.empty()) timeline.write_chrome_trace(out_dir + "/timeline.json");
    results.update_manifest({{"failed", kept}});
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
  if (host.wall_clock()) summary["wall_s"] = result.wall_s;
  if (out_of_time) summary["stopped_by_time_budget"] = true;
  summary["math"] = config.math;
  if (config.stage_sample.enabled()) summary["stage_sample"] = config.stage_sample.fraction;
  summary["iterations_completed"] = monitor.completed_iterations();
  summary["global_batch"] = static_cast<double>(config.total_workers()) * static_cast<double>(config.batch_per_worker);
  if (!result.evaluations.empty()) summary["final_accuracy"] = result.evaluations.back().accuracy;
  if (!out_of_time) {
    const auto stats = first.system->stats();
    if (!stats.empty()) summary["system_stats"] = stats;
  }
  summary.update(host.finish(out_dir));
  result.host_cost = host.host_cost();
  if (config.timeline) {
    const std::string path = out_dir + "/timeline.json";
    timeline.write_chrome_trace(path);
    summary["timeline"] = {{"file", "timeline.json"}, {"spans", timeline.size()}, {"dropped_spans", timeline.dropped()}};
    if (!config.quiet) spdlog::info("{}: timeline of {} spans in {}", config.system, timeline.size(), path);
  }
  results.update_manifest({{"summary", summary}});
  if (!out_of_time) stop_everything();
  return result;
}

}  // namespace st::train
