// `stellatrain emu up|down|cleanup|list`: the emulated network on its own,
// for manual experiments (iperf3 between node namespaces), and the tools to
// remove what a killed run left behind (docs/emu.md).
#include "apps/emu_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "apps/backends.h"
#include "apps/scenario.h"
#include "core/runtime/stop_request.h"
#ifdef ST_HAVE_EMU
#include <signal.h>
#include <sys/wait.h>

#include "emu/emu_network.h"
#include "emu/host_check.h"
#include "emu/launcher.h"
#include "emu/process.h"
#include "emu/run_registry.h"
#endif

namespace st::apps {
namespace {

#ifdef ST_HAVE_EMU
namespace fs = std::filesystem;

struct UpOptions {
  std::string scenario;
  std::string delay = "auto";
  bool foreground = false;
  std::string run_id;  // set by the detaching parent for its child
};

std::string describe_up(const emu::EmuNetwork& network) {
  const auto& plan = network.plan();
  std::string text = fmt::format(
      "emu: network {} is up (run id {}), WAN delay by {}; traces replay from now, looping.\n", plan.prefix,
      plan.run_id, emu::to_string(network.delay_method()));
  for (const auto& router : plan.routers)
    text += fmt::format("  router {:<10} {:<14} LAN {}\n", router.name, router.netns, router.lan_prefix);
  for (const auto& node : plan.nodes)
    text += fmt::format("  node {:<4} ({:<6}) {:<14} {}\n", node.rank, plan.routers[node.cluster].name, node.netns,
                        node.address);
  for (const auto& d : plan.wan)
    text += fmt::format("  {:<14} max {:.1f} Mbps, {} ms one way, buffer {:.0f} bytes\n", d.name, d.max_mbps,
                        d.delay_ms, d.buffer_bytes);
  if (plan.nodes.size() >= 2) {
    const auto& first = plan.nodes.front();
    const auto& last = plan.nodes.back();
    text += fmt::format(
        "Try (as root):\n  ip netns exec {} iperf3 -s -D\n  ip netns exec {} iperf3 -c {} -t 30\n"
        "  ip netns exec {} bash          # a shell on node {}\n",
        last.netns, first.netns, last.address, first.netns, first.rank);
  }
  text += fmt::format("Remove it with: stellatrain emu down {}\n", plan.run_id);
  return text;
}

// Builds the network and keeps it until SIGINT, SIGTERM or SIGHUP.
int up_foreground(const UpOptions& o) {
  emu::check_privileges();
  const Scenario scenario = load_scenario(o.scenario);
  check_backend(scenario, "emu");
  emu::cleanup_orphans();
  runtime::clear_stop_request();
  runtime::StopOnSignals signals(runtime::StopOnSignals::SecondSignal::kWaitForCleanup);
  const std::string id = o.run_id.empty() ? emu::unused_run_id() : o.run_id;
  emu::EmuNetworkOptions options;
  options.delay = o.delay;
  options.kind = "up";
  options.description = scenario.source;
  emu::EmuNetwork network(emu::plan_emulation(scenario.network, id), options);
  network.replay().start_clock();
  fmt::print("{}emu: ready\n", describe_up(network));
  std::fflush(stdout);
  while (runtime::stop_requested() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  network.teardown();
  fmt::print("emu: network {} removed\n", network.plan().prefix);
  return 0;
}

// Starts `emu up --foreground` as a daemon and returns once its network is
// up (printing what it printed), or its error.
int up_detached(const UpOptions& o) {
  emu::check_privileges();
  (void)load_scenario(o.scenario);  // errors here, not in the daemon's log
  emu::make_run_registry_dir();
  const std::string id = emu::unused_run_id();
  const std::string log = emu::run_log_path(id);
  emu::SpawnOptions spawn;
  spawn.argv = {fs::read_symlink("/proc/self/exe").string(), "emu", "up", o.scenario, "--foreground",
                "--emu-delay", o.delay, "--run-id", id};
  spawn.output_path = log;
  spawn.die_with_parent = false;
  spawn.new_session = true;
  const pid_t daemon = emu::spawn(spawn);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  auto read_log = [&] {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  };
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = read_log();
    if (text.find("emu: ready\n") != std::string::npos) {
      fmt::print("{}", text.substr(0, text.find("emu: ready\n")));
      return 0;
    }
    int status = 0;
    if (waitpid(daemon, &status, WNOHANG) == daemon) {
      std::fprintf(stderr, "%s", read_log().c_str());
      std::remove(log.c_str());
      spdlog::error("emu up: the network daemon ended with {}", emu::describe_wait_status(status));
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(daemon, SIGTERM);
  spdlog::error("emu up: the network was not up after 120 s (log: {})", log);
  return 1;
}

int down(const std::string& run_id) {
  emu::check_privileges();
  int found = 0;
  for (const auto& run : emu::list_runs()) {
    if (run_id.empty() ? run.kind != "up" : run.run_id != run_id) continue;
    ++found;
    if (emu::owner_alive(run)) {
      kill(run.owner, SIGTERM);  // it tears its network down itself
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (emu::owner_alive(run) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (emu::owner_alive(run)) {
        kill(run.owner, SIGKILL);
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    emu::CleanupReport report;
    emu::remove_run_namespaces(run.run_id, run.namespaces, report);
    std::remove((std::string(emu::kRegistryDir) + "/" + run.run_id + ".json").c_str());
    std::remove(emu::run_log_path(run.run_id).c_str());
    fmt::print("emu down: run {} ({}) removed\n", run.run_id, run.kind);
  }
  if (found == 0 && !run_id.empty()) {
    spdlog::error("emu down: no run {} (see `stellatrain emu list`)", run_id);
    return 1;
  }
  if (found == 0) fmt::print("emu down: no standing network (from `emu up`) to remove\n");
  return 0;
}

int cleanup() {
  emu::check_privileges();
  const auto report = emu::cleanup_orphans();
  for (const auto& name : report.removed_namespaces) fmt::print("removed namespace {}\n", name);
  for (const auto pid : report.killed_processes) fmt::print("killed process {} (it was inside one)\n", pid);
  for (const auto& live : report.live_runs) fmt::print("left alone: run {} (its owner is running)\n", live);
  fmt::print("emu cleanup: {} run(s) of dead owners removed, {} namespace(s), {} process(es)\n",
             report.removed_runs.size(), report.removed_namespaces.size(), report.killed_processes.size());
  return 0;
}

int list() {
  const auto runs = emu::list_runs();
  if (runs.empty()) fmt::print("no emulated networks\n");
  for (const auto& run : runs)
    fmt::print("{}  {:<4} owner {} ({})  {} namespace(s)  {}\n", run.run_id, run.kind, run.owner,
               emu::owner_alive(run) ? "running" : "dead: `stellatrain emu cleanup` removes it", run.namespaces.size(),
               run.description);
  return 0;
}

void finish(int status) {
  if (status != 0) throw CLI::RuntimeError(status);
}
#endif

}  // namespace

void add_emu_command(CLI::App& app) {
  auto* emu = app.add_subcommand("emu", "The emulated network on its own: up, down, cleanup, list (needs root)");
  emu->require_subcommand(1);
#ifdef ST_HAVE_EMU
  auto up_options = std::make_shared<UpOptions>();
  auto* up = emu->add_subcommand("up", "Build a scenario's network and leave it standing (for iperf3 and the like)");
  up->add_option("scenario", up_options->scenario, "Scenario YAML (its clusters and links)")->required();
  up->add_option("--emu-delay", up_options->delay, "auto, netem or nfqueue")
      ->check(CLI::IsMember({"auto", "netem", "nfqueue"}))
      ->capture_default_str();
  up->add_flag("--foreground", up_options->foreground, "Stay in the foreground until Ctrl-C (default: detach)");
  up->add_option("--run-id", up_options->run_id, "(internal) the run id the detaching parent chose")->group("");
  up->callback([up_options] { finish(up_options->foreground ? up_foreground(*up_options) : up_detached(*up_options)); });
  auto down_id = std::make_shared<std::string>();
  auto* down_cmd = emu->add_subcommand("down", "Remove networks left standing by `emu up` (all, or RUN_ID)");
  down_cmd->add_option("run_id", *down_id, "The run id `emu up` printed (default: every `emu up` network)");
  down_cmd->callback([down_id] { finish(down(*down_id)); });
  emu->add_subcommand("cleanup", "Remove what emulated runs whose launcher died (e.g. SIGKILL) left behind")
      ->callback([] { finish(cleanup()); });
  emu->add_subcommand("list", "List the emulated networks and their owners")->callback([] { finish(list()); });
#else
  emu->callback([] {
    throw std::invalid_argument(
        "emu: this build has no emulation backend (install libnl-route-3-dev libnetfilter-queue-dev and rebuild)");
  });
#endif
}

}  // namespace st::apps
