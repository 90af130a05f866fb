#include "emu/emu_backend.h"

#include <fmt/format.h>

#include <stdexcept>

#include "core/runtime/stop_request.h"
#include "emu/emu_plan.h"
#include "emu/emu_run.h"
#include "emu/host_check.h"
#include "emu/launcher.h"

namespace st::emu {

EmuBackend::EmuBackend(EmuBackendOptions options) : options_(std::move(options)) {
  try {
    (void)plan_emulation(options_.network);
  } catch (const std::exception& e) {
    throw std::invalid_argument(
        fmt::format("{}: links: the emu backend cannot build this network: {}", options_.source, e.what()));
  }
}

void EmuBackend::check(const train::TrainConfig& config) const {
  Backend::check(config);
  // Each node process would stop on its own clock, and a rank still
  // exchanging with one that stopped fails: budget by iterations instead.
  if (config.time_budget_s > 0)
    throw std::invalid_argument(
        "budget.time_s: not supported on the emu backend (its node processes would stop on their own clocks, one "
        "rank leaving while another still exchanges); give budget.iterations only, or use --iterations");
}

void EmuBackend::check_host() const { check_privileges(); }

train::TrainResult EmuBackend::train(const train::TrainConfig& config) {
  check(config);
  // The nodes and the network must go before the launcher does: a second
  // signal waits for that rather than exiting.
  runtime::StopOnSignals signals(runtime::StopOnSignals::SecondSignal::kWaitForCleanup);
  EmuTrainingRequest request;
  request.network = options_.network;
  request.network.trace_offset_s = config.trace_offset_s;  // the run's own stretch of the traces
  request.config = config;
  request.program = options_.program;
  request.arguments = options_.arguments;
  request.delay = options_.delay;
  request.description = options_.source;
  request.label = fmt::format("{} seed {}", config.label.empty() ? config.system : config.label, config.seed);
  request.show_rank0 = options_.show_rank0;
  train::TrainResult result;
  try {
    const auto emulated = run_emulated_training(request);
    result.wall_s = emulated.wall_s;
    result.mean_iteration_ms = emulated.mean_iteration_ms;
  } catch (const EmuInterrupted& interrupted) {
    result.interrupted_by = interrupted.signal();
  }
  return result;
}

}  // namespace st::emu
