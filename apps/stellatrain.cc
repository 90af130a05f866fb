// The `stellatrain` command: one binary, CLI11 subcommands.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "apps/bench/bench_command.h"
#include "apps/data_command.h"
#include "apps/emu_command.h"
#include "apps/info_command.h"
#include "apps/plot_command.h"
#include "apps/run_command.h"
#include "apps/sim_bench_command.h"
#include "apps/sweep_command.h"
#include "apps/trace_command.h"
#include "apps/train_command.h"
#include "core/model/math_kernels.h"
#include "core/runtime/freed_memory.h"

#include <cstdio>

int main(int argc, char** argv) {
  // Before LibTorch, oneDNN or OpenBLAS run anything (may restart the
  // program): the same results on every machine (core/model/math_kernels.h).
  // Then keep freed memory for reuse (core/runtime/freed_memory.h): the
  // same results, without faulting in fresh pages every step.
  try {
    st::model::pin_math_kernels(argv);
    st::runtime::apply_malloc_setting();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stellatrain: %s\n", e.what());
    return 2;
  }
  // Logs and progress go to stderr so that --json output on stdout stays clean.
  spdlog::set_default_logger(spdlog::stderr_color_mt("stellatrain"));
  spdlog::set_pattern("[%H:%M:%S] %v");

  CLI::App app{"StellaTrain testbed: distributed training over simulated and emulated WAN links"};
  app.require_subcommand(1);
  st::bench::add_bench_commands(app);
  st::apps::add_sim_bench_command(app);
  st::apps::add_info_command(app);
  st::apps::add_train_command(app);
  st::apps::add_trace_command(app);
  st::apps::add_data_command(app);
  st::apps::add_run_command(app);
  st::apps::add_sweep_command(app);
  st::apps::add_plot_command(app);
  st::apps::add_emu_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& done) {
    return done.get_exit_code();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    spdlog::error("error: {}", e.what());
    return 1;
  }
  return 0;
}
