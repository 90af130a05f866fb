// `stellatrain run`'s command line: its options into RunOptions, and what
// the command does with run_scenario's summary (the figures with --plot,
// the exit status). Running a scenario is apps/run_command.cc.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <memory>

#include "apps/backends.h"
#include "apps/interrupt.h"
#include "apps/plot_command.h"
#include "apps/run_command.h"
#include "apps/scenario.h"
#include "net/network_plan.h"

namespace st::apps {

namespace fs = std::filesystem;

CLI::Option* add_seed_list_option(CLI::App* cmd, std::vector<uint64_t>& seed_list, CLI::Option* count,
                                  const std::string& help) {
  return cmd->add_option("--seed-list", seed_list, help)
      ->delimiter(',')
      ->check(CLI::Range(0LL, 1LL << 53))  // as the scenario's seeds (apps/scenario.cc)
      ->excludes(count);
}

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand("run", "Run every system of a scenario file and summarise time-to-accuracy");
  cmd->add_option("scenario", options->scenario, "Scenario YAML (docs/scenarios.md)")->required();
  cmd->add_option("--backend", options->backend,
                  "sim (ns-3, simulated time), real (threads, wall clock, no WAN shaping) or emu (one process per "
                  "node in Linux network namespaces, tc-shaped WAN, wall clock; needs root); default: the scenario's")
      ->check(CLI::IsMember(backend_names()));
  cmd->add_option("--iterations", options->iterations,
                  "Run every system for this many iterations instead of the scenario's budget (a shorter or longer run)")
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--emu-delay", options->emu_delay,
                  "emu: how WAN delay and loss are applied: auto (netem when the kernel has it), netem, nfqueue")
      ->check(CLI::IsMember({"auto", "netem", "nfqueue"}))
      ->capture_default_str();
  cmd->add_option("--out", options->out_dir, "Results folder (default: results/<scenario name>)");
  auto* count = cmd->add_option("--seeds", options->seeds,
                                 "Run this many seeds: the scenario's first, then counting on (default: the "
                                 "scenario's seeds list)")
                    ->check(CLI::Range(1, 1000));
  add_seed_list_option(cmd, options->seed_list, count,
                       "Run exactly these seeds (comma-separated, e.g. 4,5,6), in place of the scenario's seeds list; "
                       "one seed writes OUT/<system>/ as a one-seed scenario does");
  cmd->add_flag("--timeline", options->timeline,
                "Each run also writes timeline.json: every compute task and send (Chrome trace; docs/engine.md)");
  cmd->add_option("--mtu", options->mtu,
                  "sim and emu: the network's MTU in bytes (e.g. 9000) or auto, in place of the scenario's links.mtu; "
                  "ns-3 then carries fewer, larger packets: faster, at some fidelity (docs/sim.md)");
  cmd->add_option("--systems", options->systems,
                  "Only the systems with these labels (comma-separated; default: all of the scenario's)")
      ->delimiter(',');
  cmd->add_option("--network", options->network,
                  "sim: how the network carries the bytes, in place of the scenario's links.model: packet (ns-3's "
                  "packets and TCP, the reference) or flow (the flow-level model: much faster, checked against "
                  "packet in docs/sim-flow.md)")
      ->check(CLI::IsMember(net::network_model_names()));
  cmd->add_option("--stage-sample", options->stage_sample,
                  "timing runs: run the CPU stages (gather, compression, error feedback, optimizer) on this share "
                  "of each layer, priced and sent at full size, in place of the scenario's compute.stage_sample; 0: "
                  "full size (docs/sim-compute.md, \"Sampled stages\")")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--label-skew", options->label_skew,
                  "Where every system's training data lives, in place of the scenario's dataset.label_skew: the share "
                  "of each class held at its home node (0: every node shards the whole set; 1: each node only its own "
                  "classes; docs/models-and-data.md, \"Data that lives in places\")")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--quiet", options->quiet, "Only the runner's lines, no per-iteration progress");
  cmd->add_flag("--summarize", options->summarize,
                "Run nothing: write summary.json from the runs already in --out (each system, or those of --systems, "
                "whose runs match the scenario for every seed, as a rerun into the folder keeps them): runs put "
                "together from several machines (docs/runner.md)");
  cmd->add_flag("--plot", options->plot,
                "Draw the figures and report.md (`stellatrain plot OUT`) once summary.json is written (with --slurm: "
                "once every run has finished)");
  cmd->add_option("--jobs", options->jobs,
                  "sim: run this many systems/seeds at once, each in a process of its own (ns-3 runs one simulation "
                  "per process on one thread); results are the same as one at a time; output of each in OUT/logs/")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->add_option("--progress-every", options->progress_every_s,
                  "With --jobs (not --slurm): every this many seconds, each running run's latest complete line of "
                  "output from its log (0: never; --quiet: never, and the children run quiet too)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  add_slurm_options(cmd, options->slurm);
  // A --jobs parent starts its children with these; not for users.
  cmd->add_option("--only-system", options->only_system)->group("");
  cmd->add_option("--only-seed", options->only_seed)->group("");
  cmd->callback([options] {
    nlohmann::ordered_json summary;
    try {
      summary = run_scenario(*options);
    } catch (const Interrupted& interrupted) {
      spdlog::error("interrupted by signal {}: finished systems and the interrupted run's files are kept; summary.json "
                    "marks it",
                    interrupted.signal);
      throw CLI::RuntimeError(128 + interrupted.signal);
    }
    if (slurm_pending(summary)) return;  // submitted; a later run of the same command merges
    if (options->plot) plot_results_folder(options->out_dir.empty() ? (fs::path("results") / load_scenario(options->scenario).name).string()
                                                                   : options->out_dir);
    int failed = 0;
    for (const auto& [label, system] : summary["systems"].items()) failed += system.contains("error") ? 1 : 0;
    if (failed > 0) {
      spdlog::error("{} system(s) failed (see the table above and summary.json)", failed);
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace st::apps
