#include "apps/backends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "apps/scenario.h"
#include "core/train/run/real_backend.h"
#ifdef ST_HAVE_SIM
#include "sim/backend_info.h"
#include "sim/compute_model.h"
#include "sim/sim_backend.h"
#endif
#ifdef ST_HAVE_EMU
#include "emu/backend_info.h"
#include "emu/emu_backend.h"
#endif

namespace st::apps {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<train::Backend> make_sim(const BackendInputs& inputs) {
#ifdef ST_HAVE_SIM
  if (!inputs.sim_compute) throw std::invalid_argument(fmt::format("{}: the sim backend needs a compute section", inputs.source));
  return std::make_unique<sim::SimBackend>(sim::SimRunConfig{inputs.source, inputs.network, *inputs.sim_compute});
#else
  (void)inputs;
  throw std::invalid_argument("backend sim: this build has no ns-3 (install libns3-dev ns3 libgsl-dev and rebuild)");
#endif
}

// A deterministic model (profile, analytic) prices the modelled hardware and
// can pace a real-time timing run; `measured` would price this machine.
bool prices_modelled_hardware(const BackendInputs& inputs) {
#ifdef ST_HAVE_SIM
  return inputs.sim_compute && sim::prices_modelled_hardware(inputs.sim_compute->compute);
#else
  (void)inputs;
  return false;  // the models are built with the sim backend
#endif
}

// The real backend paces a timing run by the scenario's compute model, as
// the simulated executor prices it.
train::RealPacing real_pacing(const BackendInputs& inputs) {
  train::RealPacing pacing;
#ifdef ST_HAVE_SIM
  if (!prices_modelled_hardware(inputs)) return pacing;
  const auto settings = inputs.sim_compute;
  pacing.model_for = [settings](const train::TrainConfig& training) -> std::shared_ptr<const runtime::ComputeTimeModel> {
    return sim::make_compute_model(sim::priced_for(settings->compute, training));
  };
  pacing.cpu_cores = settings->executor.cpu_cores;
#else
  (void)inputs;
#endif
  return pacing;
}

std::unique_ptr<train::Backend> make_emu(const BackendInputs& inputs) {
#ifdef ST_HAVE_EMU
  emu::EmuBackendOptions options;
  options.source = inputs.source;
  options.network = inputs.network;
  options.program = self_executable();
  // The nodes read the system's settings from the same scenario file.
  const std::string scenario_file = fs::absolute(inputs.source).string();
  options.arguments = [scenario_file](const train::TrainConfig& node) {
    return node_arguments(scenario_file, node.label.empty() ? node.system : node.label, node);
  };
  options.delay = inputs.emu_delay;
  options.show_rank0 = inputs.show_progress;
  options.nodes_price_compute = prices_modelled_hardware(inputs);
  return std::make_unique<emu::EmuBackend>(std::move(options));
#else
  (void)inputs;
  throw std::invalid_argument(
      "backend emu: this build has no emulation backend (install libnl-route-3-dev libnetfilter-queue-dev and "
      "rebuild)");
#endif
}

}  // namespace

std::string self_executable() {
  std::error_code error;
  const auto path = fs::read_symlink("/proc/self/exe", error);
  if (error) throw std::runtime_error("cannot find this program's path (/proc/self/exe): " + error.message());
  return path.string();
}

std::vector<std::string> node_arguments(const std::string& scenario_file, const std::string& system_label,
                                        const train::TrainConfig& c) {
  auto number = [](double v) { return fmt::format("{}", v); };
  std::vector<std::string> args = {"train",
                                   "--scenario", scenario_file,
                                   "--scenario-system", system_label,
                                   "--seed", std::to_string(c.seed),
                                   "--trace-offset", number(c.trace_offset_s),
                                   "--iterations", std::to_string(c.iterations),
                                   "--nodes", std::to_string(c.nodes),
                                   "--transport", c.transport,
                                   "--rank", std::to_string(c.rank),
                                   "--master-addr", c.master_addr,
                                   "--master-port", std::to_string(c.master_port),
                                   "--listen-host", c.listen_host,
                                   "--peer-timeout", number(c.peer_timeout_s),
                                   "--threads", std::to_string(c.executor_threads),
                                   // The run's placement, which `run --label-skew` may have set in
                                   // place of the scenario file's.
                                   "--label-skew", number(c.label_skew)};
  if (!c.advertise_host.empty()) args.insert(args.end(), {"--advertise-host", c.advertise_host});
  // The run's share, which `run --stage-sample` may have set in place of the file's.
  if (c.stage_sample.enabled()) args.insert(args.end(), {"--stage-sample", number(c.stage_sample.fraction)});
  if (!c.out_dir.empty()) args.insert(args.end(), {"--out", c.out_dir});
  if (c.quiet) args.push_back("--quiet");
  return args;
}

const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = {"sim", "real", "emu"};
  return names;
}

std::unique_ptr<train::Backend> make_backend(const std::string& name, const BackendInputs& inputs) {
  if (name == "real") return std::make_unique<train::RealBackend>(real_pacing(inputs));
  if (name == "sim") return make_sim(inputs);
  if (name == "emu") return make_emu(inputs);
  throw std::invalid_argument(fmt::format("backend: '{}' is not one of: {}", name, fmt::join(backend_names(), ", ")));
}

std::string backend_status(const std::string& name) {
  if (name == "sim") {
#ifdef ST_HAVE_SIM
    return sim::backend_info();
#else
    return fmt::format("not built ({})", ST_SIM_REASON);
#endif
  }
  if (name == "emu") {
#ifdef ST_HAVE_EMU
    return emu::backend_info();
#else
    return fmt::format("not built ({})", ST_EMU_REASON);
#endif
  }
  return name == "real" ? "always built" : "unknown backend";
}

BackendInputs backend_inputs(const Scenario& scenario) {
  BackendInputs inputs;
  inputs.source = scenario.source;
  inputs.network = scenario.network;
  inputs.sim_compute = scenario.sim_compute;
  return inputs;
}

BackendInputs backend_inputs_from_sim_config(const std::string& file) {
#ifdef ST_HAVE_SIM
  const auto config = sim::load_sim_config(file);
  BackendInputs inputs;
  inputs.source = config.source;
  inputs.network = config.topology;
  inputs.sim_compute = std::make_shared<const sim::SimComputeSettings>(config.compute);
  return inputs;
#else
  (void)file;
  throw std::invalid_argument("--backend sim: this build has no ns-3 (install libns3-dev ns3 libgsl-dev and rebuild)");
#endif
}

std::shared_ptr<const sim::SimComputeSettings> read_sim_compute(const util::YamlField& top, const Scenario& scenario,
                                                                const train::TrainConfig& training,
                                                                const std::string& base_dir) {
#ifdef ST_HAVE_SIM
  std::vector<sim::ClusterPricing> clusters;
  for (const auto& c : scenario.clusters) clusters.push_back({c.device, c.profile, c.tflops, c.nodes});
  return sim::parse_scenario_compute(top, clusters, training, base_dir);
#else
  (void)top, (void)scenario, (void)training, (void)base_dir;
  return nullptr;
#endif
}

void check_backend(const Scenario& scenario, const std::string& name) {
  const auto backend = make_backend(name, backend_inputs(scenario));
  for (std::size_t i = 0; i < scenario.systems.size(); ++i) {
    try {
      backend->check(scenario.systems[i].config);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fmt::format("{}: systems[{}]: {}", scenario.source, i, e.what()));
    }
  }
}

}  // namespace st::apps
