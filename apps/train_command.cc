#include "apps/train_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <memory>

#include "apps/interrupt.h"
#include "apps/scenario.h"
#include "core/train/backend.h"
#include "core/train/trainer.h"
#ifdef ST_HAVE_SIM
#include "sim/sim_backend.h"
#endif

namespace st::apps {
namespace {

// torchrun-style: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT fill what the
// flags left unset.
void apply_environment(train::TrainConfig& c, const CLI::App& cmd) {
  auto env = [](const char* name) -> const char* { return std::getenv(name); };
  auto parse_int = [](const char* name, const char* value) {
    try {
      std::size_t used = 0;
      const int v = std::stoi(value, &used);
      if (used != std::string(value).size()) throw std::invalid_argument("trailing characters");
      return v;
    } catch (const std::exception&) {
      throw std::invalid_argument(fmt::format("environment variable {}='{}' is not an integer", name, value));
    }
  };
  if (cmd.count("--rank") == 0 && env("RANK")) c.rank = parse_int("RANK", env("RANK"));
  if (cmd.count("--nodes") == 0 && env("WORLD_SIZE")) c.nodes = parse_int("WORLD_SIZE", env("WORLD_SIZE"));
  if (cmd.count("--master-addr") == 0 && env("MASTER_ADDR")) c.master_addr = env("MASTER_ADDR");
  if (cmd.count("--master-port") == 0 && env("MASTER_PORT")) c.master_port = parse_int("MASTER_PORT", env("MASTER_PORT"));
}

struct BackendChoice {
  std::string name = "real";  // real or sim
  std::string sim_config;     // sim: the topology and compute-model YAML
};

// The sim backend takes the node count from its topology unless --nodes
// says otherwise (then they must agree).
std::unique_ptr<train::Backend> make_backend(const BackendChoice& choice, train::TrainConfig& c, const CLI::App& cmd) {
  if (choice.name == "real") {
    if (!choice.sim_config.empty()) throw std::invalid_argument("--sim-config: only with --backend sim");
    return nullptr;
  }
#ifdef ST_HAVE_SIM
  if (choice.sim_config.empty()) throw std::invalid_argument("--backend sim needs --sim-config FILE (docs/sim.md)");
  const auto sim_config = sim::load_sim_config(choice.sim_config);
  int nodes = 0;
  for (const auto& cluster : sim_config.topology.clusters) nodes += cluster.nodes;
  if (cmd.count("--nodes") == 0) c.nodes = nodes;
  return sim::make_sim_backend(sim_config, c);
#else
  (void)c;
  (void)cmd;
  throw std::invalid_argument("--backend sim: this build has no ns-3 (install libns3-dev ns3 libgsl-dev and rebuild)");
#endif
}

}  // namespace

std::vector<std::string> node_arguments(const std::string& scenario_file, const std::string& system_label,
                                        const train::TrainConfig& c) {
  auto number = [](double v) { return fmt::format("{}", v); };
  std::vector<std::string> args = {"train",
                                   "--scenario", scenario_file,
                                   "--scenario-system", system_label,
                                   "--seed", std::to_string(c.seed),
                                   "--iterations", std::to_string(c.iterations),
                                   "--nodes", std::to_string(c.nodes),
                                   "--transport", c.transport,
                                   "--rank", std::to_string(c.rank),
                                   "--master-addr", c.master_addr,
                                   "--master-port", std::to_string(c.master_port),
                                   "--listen-host", c.listen_host,
                                   "--peer-timeout", number(c.peer_timeout_s),
                                   "--threads", std::to_string(c.executor_threads)};
  if (!c.advertise_host.empty()) args.insert(args.end(), {"--advertise-host", c.advertise_host});
  if (!c.out_dir.empty()) args.insert(args.end(), {"--out", c.out_dir});
  if (c.quiet) args.push_back("--quiet");
  return args;
}

namespace {

// `--scenario FILE --scenario-system LABEL`: the system's settings are the
// scenario's, parsed by the same code as `stellatrain run`; only what the
// caller decides per node and per run comes from the flags given.
void apply_scenario_system(train::TrainConfig& c, const std::string& file, const std::string& label,
                           const CLI::App& cmd) {
  const Scenario scenario = load_scenario(file);
  const ScenarioSystem* system = nullptr;
  std::string labels;
  for (const auto& s : scenario.systems) {
    if (s.label == label) system = &s;
    labels += (labels.empty() ? "" : ", ") + s.label;
  }
  if (system == nullptr)
    throw std::invalid_argument(fmt::format("--scenario-system: {} has no system labelled '{}' (it has: {})", file,
                                            label, labels));
  train::TrainConfig chosen = system->config;
  auto take = [&](const char* flag, auto member) {
    if (cmd.count(flag) > 0) chosen.*member = c.*member;
  };
  take("--seed", &train::TrainConfig::seed);
  take("--iterations", &train::TrainConfig::iterations);
  take("--transport", &train::TrainConfig::transport);
  take("--rank", &train::TrainConfig::rank);
  take("--master-addr", &train::TrainConfig::master_addr);
  take("--master-port", &train::TrainConfig::master_port);
  take("--listen-host", &train::TrainConfig::listen_host);
  take("--advertise-host", &train::TrainConfig::advertise_host);
  take("--peer-timeout", &train::TrainConfig::peer_timeout_s);
  take("--threads", &train::TrainConfig::executor_threads);
  take("--out", &train::TrainConfig::out_dir);
  take("--quiet", &train::TrainConfig::quiet);
  take("--timeline", &train::TrainConfig::timeline);
  take("--compute-device", &train::TrainConfig::compute_device);
  if (cmd.count("--nodes") > 0 && c.nodes != chosen.nodes)
    throw std::invalid_argument(fmt::format("--nodes {}: the scenario {} has {} node(s)", c.nodes, file, chosen.nodes));
  c = chosen;
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto config = std::make_shared<train::TrainConfig>();
  auto backend = std::make_shared<BackendChoice>();
  auto* cmd = app.add_subcommand("train", "Train one system: real threads and sockets, or simulated in ns-3");
  auto& c = *config;
  cmd->add_option("--backend", backend->name, "real (threads and sockets) or sim (ns-3, virtual time)")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  cmd->add_option("--sim-config", backend->sim_config, "sim: topology, WAN traces and compute-time model (YAML)");
  cmd->add_option("--system", c.system, train::system_names_text() + " (docs/systems.md)")->capture_default_str();
  cmd->add_option("--model", c.model, "mlp, cnn, resnet18 or vit")->capture_default_str();
  cmd->add_flag("--timeline", c.timeline, "Also write OUT/timeline.json: every compute task and send (Chrome trace)");
  cmd->add_option("--compute-device", c.compute_device, "Where forward and backward run: cpu, cuda or cuda:N")
      ->capture_default_str();
  cmd->add_option("--dataset", c.dataset, "fashion-mnist, cifar10 or synthetic")->capture_default_str();
  cmd->add_option("--data-dir", c.data_dir, "Dataset folder (default: the dataset's own)");
  cmd->add_option("--nodes", c.nodes, "Nodes (processes over tcp; WORLD_SIZE)")->capture_default_str();
  cmd->add_option("--gpus-per-node", c.gpus_per_node, "Local workers per node")->capture_default_str();
  cmd->add_option("--batch", c.batch_per_worker, "Batch size per worker")->capture_default_str();
  cmd->add_option("--iterations", c.iterations, "Training iterations")->capture_default_str();
  cmd->add_option("--time-budget", c.time_budget_s, "Also stop after this many seconds of the run's clock (0: none)")
      ->capture_default_str();
  cmd->add_option("--lr", c.lr, "SGD learning rate")->capture_default_str();
  cmd->add_option("--momentum", c.momentum, "SGD momentum")->capture_default_str();
  cmd->add_option("--weight-decay", c.weight_decay, "SGD weight decay")->capture_default_str();
  cmd->add_option("--warmup", c.warmup_iterations, "Linear learning-rate warmup over this many iterations")
      ->capture_default_str();
  cmd->add_option("--lazy-momentum", c.lazy_momentum, "stellatrain's sparse SGD: decay (paper) or exact")
      ->capture_default_str();
  cmd->add_option("--momentum-at", c.momentum_at, "stellatrain: master (sparse SGD momentum) or node (momentum correction)")
      ->capture_default_str();
  cmd->add_flag("--momentum-masking", c.momentum_masking, "stellatrain, --momentum-at node: zero the sent entries' velocity");
  cmd->add_option("--compensation", c.staleness_compensation, "stellatrain, staleness 1: none, predict or dc")
      ->capture_default_str();
  cmd->add_flag("--controller,!--no-controller", c.controller,
                "stellatrain: adapt density and batch split to the measured bandwidth (docs/control.md)");
  cmd->add_option("--control-interval", c.control.interval_s, "Controller tick, seconds of the run's clock")
      ->capture_default_str();
  cmd->add_option("--min-density", c.control.min_density, "Controller's lower density bound")->capture_default_str();
  cmd->add_option("--max-density", c.control.max_density, "Controller's upper density bound")->capture_default_str();
  cmd->add_option("--control-safety", c.control.safety, "Fraction of the overlap window the exchange may fill")
      ->capture_default_str();
  cmd->add_option("--control-growth", c.control.estimator.growth, "Bandwidth probing factor per tick")
      ->capture_default_str();
  cmd->add_option("--control-initial-mbps", c.control.estimator.initial_mbps, "Bandwidth estimate before a measurement")
      ->capture_default_str();
  cmd->add_flag("!--no-batch-control", c.control.adapt_batch, "Keep equal batches (the controller adapts only the density)");
  cmd->add_option("--dc-lambda", c.dc_lambda, "Delay compensation strength (--compensation dc)")->capture_default_str();
  cmd->add_option("--density", c.density, "Fraction of gradient elements sent (stellatrain, topk-sync)")->capture_default_str();
  cmd->add_option("--compressor", c.compressor, "stellatrain's compressor")->capture_default_str();
  cmd->add_option("--staleness", c.staleness, "stellatrain: 0 or 1")->capture_default_str();
  cmd->add_flag("--fp16", c.fp16_values, "Send gradient values as fp16");
  cmd->add_option("--averaging-period", c.averaging_period, "local-sgd, cloudless-ma: iterations between model averages")
      ->capture_default_str();
  cmd->add_option("--averaging-period-s", c.averaging_period_s, "cloudless-ma: seconds between model averages (0: by iterations)")
      ->capture_default_str();
  cmd->add_flag("!--no-averaging-overlap", c.averaging_overlap, "cloudless-ma: wait for each average instead of training on");
  cmd->add_option("--local-sgd-start", c.local_sgd_start_iteration, "local-sgd: DDP iterations before local steps start")
      ->capture_default_str();
  cmd->add_option("--accumulation-steps", c.accumulation_steps, "cloudless-asgd-ga: iterations per sent accumulation")
      ->capture_default_str();
  cmd->add_option("--max-staleness", c.max_staleness, "cloudless-asgd-ga: staleness bound in iterations")
      ->capture_default_str();
  // ddp-powersgd
  cmd->add_option("--powersgd-rank", c.powersgd_rank, "ddp-powersgd: rank of the approximation")->capture_default_str();
  cmd->add_option("--powersgd-start-iteration", c.powersgd_start_iteration,
                  "ddp-powersgd: plain DDP before this iteration")
      ->capture_default_str();
  cmd->add_flag("!--no-powersgd-error-feedback", c.powersgd_error_feedback, "ddp-powersgd: no error feedback");
  cmd->add_flag("!--no-powersgd-warm-start", c.powersgd_warm_start, "ddp-powersgd: a fresh Q every iteration");
  cmd->add_option("--comm-hook", c.comm_hook, "ddp-gloo: none or fp16 (c10d's FP16_COMPRESS hook on the Reducer)")
      ->capture_default_str();
  cmd->add_option("--eval-interval", c.eval_interval, "Iterations between evaluations (0: end only)")->capture_default_str();
  cmd->add_option("--eval-samples", c.eval_samples, "Test samples per evaluation (0: all)")->capture_default_str();
  cmd->add_option("--transport", c.transport, "inproc (all nodes in this process) or tcp (this process is one node)")
      ->capture_default_str();
  cmd->add_option("--rank", c.rank, "This node's rank (tcp; RANK)");
  cmd->add_option("--master-addr", c.master_addr, "Rendezvous host (tcp; MASTER_ADDR)")->capture_default_str();
  cmd->add_option("--master-port", c.master_port, "Rendezvous port (tcp; MASTER_PORT)")->capture_default_str();
  cmd->add_option("--peer-timeout", c.peer_timeout_s, "Seconds before a silent peer is an error")->capture_default_str();
  cmd->add_option("--listen-host", c.listen_host, "Address this rank listens on (tcp)")->capture_default_str();
  auto scenario = std::make_shared<std::pair<std::string, std::string>>();
  cmd->add_option("--scenario", scenario->first,
                  "Take the system's settings from this scenario file (with --scenario-system; the emu launcher "
                  "starts its nodes so); flags given for seed, iterations, rank and addresses still apply");
  cmd->add_option("--scenario-system", scenario->second, "The label of the scenario's system to run");
  cmd->add_option("--advertise-host", c.advertise_host,
                  "Address peers reach this rank at (tcp; default: the listen address, or the one towards the master)");
  cmd->add_option("--threads", c.executor_threads, "Executor threads (0: one per core)")->capture_default_str();
  cmd->add_option("--seed", c.seed, "Seed of initialisation, data order and compressors")->capture_default_str();
  cmd->add_option("--out", c.out_dir, "Results folder (manifest.json, iterations.csv, eval.csv)");
  cmd->add_flag("--quiet", c.quiet, "No progress output");
  c.controller = true;  // stellatrain's default; other systems have none
  cmd->callback([config, backend, scenario, cmd] {
    if (scenario->first.empty() != scenario->second.empty())
      throw std::invalid_argument("--scenario and --scenario-system go together");
    if (!scenario->first.empty()) apply_scenario_system(*config, scenario->first, scenario->second, *cmd);
    apply_environment(*config, *cmd);
    if (config->system != "stellatrain" && cmd->count("--controller") == 0) config->controller = false;
    const auto chosen = make_backend(*backend, *config, *cmd);
    InterruptHandlers interrupts;
    const auto result = train::run_training(*config, chosen.get());
    if (result.interrupted_by != 0) {
      spdlog::error("{}: interrupted by signal {}; the results so far are kept{}", config->system,
                    result.interrupted_by, config->out_dir.empty() ? "" : " in " + config->out_dir);
      throw CLI::RuntimeError(128 + result.interrupted_by);
    }
    if (chosen && !config->quiet) spdlog::info("host cost: {}", chosen->host_cost().dump());
    const std::string accuracy =
        result.evaluations.empty()
            ? "evaluation runs on rank 0"
            : fmt::format("final test accuracy {:.2f}%", 100 * result.evaluations.back().accuracy);
    fmt::print("{}: {}, {:.1f} s{}{}\n", config->system, accuracy, result.wall_s, chosen ? " simulated" : "",
               config->out_dir.empty() ? "" : ", results in " + config->out_dir);
  });
}

}  // namespace st::apps
