#include "apps/train_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "apps/backends.h"
#include "apps/interrupt.h"
#include "apps/scenario.h"
#include "apps/system_flags.h"
#include "core/model/model.h"
#include "core/runtime/stop_request.h"
#include "core/train/run/backend.h"
#include "core/train/system_registry.h"

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

// The backend from the factory (apps/backends.h). The sim backend takes the
// node count from its topology unless --nodes says otherwise (then they
// must agree).
std::unique_ptr<train::Backend> choose_backend(const BackendChoice& choice, train::TrainConfig& c, const CLI::App& cmd,
                                               const BackendInputs& scenario_inputs) {
  if (choice.name != "sim") {
    if (!choice.sim_config.empty()) throw std::invalid_argument("--sim-config: only with --backend sim");
    return make_backend(choice.name, scenario_inputs);
  }
  if (choice.sim_config.empty()) throw std::invalid_argument("--backend sim needs --sim-config FILE (docs/sim.md)");
  const auto inputs = backend_inputs_from_sim_config(choice.sim_config);
  if (cmd.count("--nodes") == 0) c.nodes = inputs.network.total_nodes();
  if (cmd.count("--trace-offset") == 0) c.trace_offset_s = inputs.network.trace_offset_s;  // the file's own
  return make_backend(choice.name, inputs);
}

// `--scenario FILE --scenario-system LABEL`: the system's settings are the
// scenario's, parsed by the same code as `stellatrain run`; only what the
// caller decides per node and per run comes from the flags given. Returns
// the scenario's backend inputs: an emulated node paces a timing run by its
// compute model.
BackendInputs apply_scenario_system(train::TrainConfig& c, const std::string& file, const std::string& label,
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
  take("--trace-offset", &train::TrainConfig::trace_offset_s);
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
  take("--label-skew", &train::TrainConfig::label_skew);
  // The share only: the smallest sample stays the scenario's.
  if (cmd.count("--stage-sample") > 0) chosen.stage_sample.fraction = c.stage_sample.fraction;
  if (cmd.count("--nodes") > 0 && c.nodes != chosen.nodes)
    throw std::invalid_argument(fmt::format("--nodes {}: the scenario {} has {} node(s)", c.nodes, file, chosen.nodes));
  c = chosen;
  return backend_inputs(scenario);
}

// --model-file: the model is named by --model, else by the file's stem; a
// zoo name would pass the file off as the zoo's model in results and
// profiles.
void name_model_file(train::TrainConfig& c, const CLI::App& cmd) {
  if (c.model_file.empty()) return;
  if (cmd.count("--model") == 0) c.model = std::filesystem::path(c.model_file).stem().string();
  const auto zoo = model::model_names();
  if (std::find(zoo.begin(), zoo.end(), c.model) != zoo.end())
    throw std::invalid_argument(
        cmd.count("--model") > 0
            ? fmt::format("--model {}: a zoo model's name; name --model-file {} otherwise", c.model, c.model_file)
            : fmt::format("--model-file {}: its name, {}, is a zoo model's; give it another with --model", c.model_file,
                          c.model));
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto config = std::make_shared<train::TrainConfig>();
  auto backend = std::make_shared<BackendChoice>();
  auto system_flags = std::make_shared<SystemFlags>();
  auto* cmd = app.add_subcommand("train", "Train one system: real threads and sockets, or simulated in ns-3");
  auto& c = *config;
  cmd->add_option("--backend", backend->name, "real (threads and sockets) or sim (ns-3, virtual time)")
      ->check(CLI::IsMember({"real", "sim"}))
      ->capture_default_str();
  cmd->add_option("--sim-config", backend->sim_config, "sim: topology, WAN traces and compute-time model (YAML)");
  cmd->add_option("--system", c.system, train::system_names_text() + " (docs/systems.md)")
      ->check(CLI::IsMember(train::system_names()))
      ->capture_default_str();
  cmd->add_option("--model", c.model, "A zoo model (mlp, cnn, resnet18, vit, ...), or the name of --model-file's")
      ->capture_default_str();
  cmd->add_option("--model-file", c.model_file, "A TorchScript model of one's own (docs/byo.md)");
  cmd->add_option("--model-flops", c.model_flops, "--model-file's forward FLOPs per sample (default: measured)");
  cmd->add_flag("--timeline", c.timeline, "Also write OUT/timeline.json: every compute task and send (Chrome trace)");
  cmd->add_option("--compute-device", c.compute_device, "Where forward and backward run: cpu, cuda or cuda:N")
      ->capture_default_str();
  cmd->add_option("--dataset", c.dataset, "fashion-mnist, cifar10, synthetic or npz (with --data-file)")
      ->capture_default_str();
  cmd->add_option("--data-dir", c.data_dir, "Dataset folder (default: the dataset's own)");
  cmd->add_option("--data-file", c.data_file, "npz: the dataset file (docs/byo.md)");
  cmd->add_option("--label-skew", c.label_skew,
                  "Place the training samples by label across nodes: this fraction of each class at its home node "
                  "(0: every node shards the whole set)")
      ->capture_default_str();
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
  system_flags->add_to(*cmd);
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
  cmd->add_option("--stage-sample", c.stage_sample.fraction,
                  "Timing runs: run the CPU stages on this share of each layer, priced and sent at full size (0: "
                  "full size; docs/sim-compute.md \"Sampled stages\")")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", c.seed, "Seed of initialisation, data order and compressors")->capture_default_str();
  cmd->add_option("--trace-offset", c.trace_offset_s,
                  "sim: where the WAN traces start replaying, seconds into them (a scenario derives it from the seed)")
      ->capture_default_str();
  cmd->add_option("--out", c.out_dir, "Results folder (manifest.json, iterations.csv, eval.csv)");
  cmd->add_flag("--quiet", c.quiet, "No progress output");
  cmd->callback([config, backend, scenario, system_flags, cmd] {
    if (scenario->first.empty() != scenario->second.empty())
      throw std::invalid_argument("--scenario and --scenario-system go together");
    BackendInputs scenario_inputs;
    if (!scenario->first.empty()) {
      if (system_flags->any_given())
        throw std::invalid_argument("--scenario: the system's options come from the scenario file; give no option flags");
      scenario_inputs = apply_scenario_system(*config, scenario->first, scenario->second, *cmd);
    } else {
      const std::string system = config->system;
      config->use_system(system);
      config->options->use_command_defaults();
      system_flags->apply(*config);
      name_model_file(*config, *cmd);
    }
    apply_environment(*config, *cmd);
    const auto chosen = choose_backend(*backend, *config, *cmd, scenario_inputs);
    runtime::clear_stop_request();
    runtime::StopOnSignals interrupts;
    const auto result = chosen->train(*config);
    if (result.interrupted_by != 0) {
      spdlog::error("{}: interrupted by signal {}; the results so far are kept{}", config->system,
                    result.interrupted_by, config->out_dir.empty() ? "" : " in " + config->out_dir);
      throw CLI::RuntimeError(128 + result.interrupted_by);
    }
    if (chosen->simulated() && !config->quiet) spdlog::info("host cost: {}", result.host_cost.dump());
    const std::string accuracy =
        result.evaluations.empty()
            ? "evaluation runs on rank 0"
            : fmt::format("final test accuracy {:.2f}%", 100 * result.evaluations.back().accuracy);
    fmt::print("{}: {}, {:.1f} s{}{}\n", config->system, accuracy, result.wall_s, chosen->simulated() ? " simulated" : "",
               config->out_dir.empty() ? "" : ", results in " + config->out_dir);
  });
}

}  // namespace st::apps
