// Runs training on the sim backend, once per system, and prints where the
// host's time went: real compute (LibTorch, compressors, optimizer), engine
// bookkeeping, and ns-3 itself (TCP, links, replay), with simulated seconds
// per wall second. All measured side by side in one process.
#include "apps/sim_bench_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "apps/backends.h"
#include "core/train/run/backend.h"

namespace st::apps {
namespace {

struct SimBenchOptions {
  std::string sim_config = "scenarios/sim-2x2-115mbps.yaml";
  std::vector<std::string> systems{"stellatrain", "ddp"};
  train::TrainConfig train;
  bool json = false;
};

nlohmann::json bench_one(const SimBenchOptions& o, const std::string& system) {
  auto c = o.train;
  c.use_system(system);  // the engine's defaults (stellatrain at a fixed density)
  const auto inputs = backend_inputs_from_sim_config(o.sim_config);
  c.nodes = inputs.network.total_nodes();
  c.trace_offset_s = inputs.network.trace_offset_s;
  const auto backend = make_backend("sim", inputs);
  spdlog::info("bench sim: {} on {}, {} iterations", system, c.model, c.iterations);
  const auto result = backend->train(c);
  auto entry = result.host_cost;
  const double compute = entry["compute_wall_s"], simulator = entry["simulator_wall_s"];
  entry["name"] = system;
  entry["model"] = c.model;
  entry["iterations"] = c.iterations;
  entry["simulator_vs_compute"] = compute > 0 ? simulator / compute : 0.0;
  entry["final_accuracy"] = result.evaluations.empty() ? 0.0 : result.evaluations.back().accuracy;
  return entry;
}

void run(const SimBenchOptions& o) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& system : o.systems) all.push_back(bench_one(o, system));
  if (o.json) {
    fmt::print("{}\n", all.dump(2));
    return;
  }
  fmt::print("{:<12} {:>11} {:>9} {:>10} {:>11} {:>9} {:>12} {:>10}\n", "system", "simulated_s", "wall_s",
             "compute_s", "simulator_s", "tasks_s", "sim_s/wall_s", "ns3/compute");
  for (const auto& e : all)
    fmt::print("{:<12} {:>11.2f} {:>9.2f} {:>10.2f} {:>11.2f} {:>9.2f} {:>12.3f} {:>10.3f}\n", e["name"].get<std::string>(),
               e["simulated_s"].get<double>(), e["wall_s"].get<double>(), e["compute_wall_s"].get<double>(),
               e["simulator_wall_s"].get<double>(), e["engine_tasks_wall_s"].get<double>(),
               e["simulated_s_per_wall_s"].get<double>(), e["simulator_vs_compute"].get<double>());
}

}  // namespace

void add_sim_bench_command(CLI::App& app) {
  auto* bench = app.get_subcommand("bench");
  auto o = std::make_shared<SimBenchOptions>();
  o->train.model = "cnn";
  o->train.dataset = "fashion-mnist";
  o->train.gpus_per_node = 2;
  o->train.iterations = 600;
  o->train.eval_interval = 0;
  o->train.eval_samples = 2000;
  o->train.quiet = true;
  auto* cmd = bench->add_subcommand("sim", "What the ns-3 backend costs: wall seconds in ns-3 vs real compute");
  cmd->add_option("--sim-config", o->sim_config, "Topology and compute model (YAML)")->capture_default_str();
  cmd->add_option("--systems", o->systems, "Systems to run")->delimiter(',');
  cmd->add_option("--model", o->train.model, "Model")->capture_default_str();
  cmd->add_option("--dataset", o->train.dataset, "Dataset")->capture_default_str();
  cmd->add_option("--gpus-per-node", o->train.gpus_per_node, "Workers per node")->capture_default_str();
  cmd->add_option("--iterations", o->train.iterations, "Iterations per system")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON array");
  cmd->callback([o] { run(*o); });
}

}  // namespace st::apps
