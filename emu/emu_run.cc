#include "emu/emu_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/train/run/results.h"
#include "emu/emu_network.h"
#include "emu/host_check.h"
#include "emu/launcher.h"
#include "emu/run_registry.h"
#include "net/network_plan.h"

namespace st::emu {
namespace {

namespace fs = std::filesystem;

constexpr int kMasterPort = 29500;  // every node has its own namespace: no clash with anything

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw EmuError(fmt::format("{}: cannot read the file", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw EmuError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

void write_file(const fs::path& path, const std::string& text) {
  const fs::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary);
    out << text;
    if (!out) throw EmuError(fmt::format("cannot write {}", temporary.string()));
  }
  fs::rename(temporary, path);
}

// The mean of iterations.csv's iteration_ms column (ddp-gloo's manifest
// does not carry it).
double mean_iteration_ms(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  double sum = 0;
  int count = 0;
  while (std::getline(in, line)) {
    // rank,iteration,start_s,iteration_ms,...
    std::size_t at = 0;
    for (int comma = 0; comma < 3 && at != std::string::npos; ++comma) at = line.find(',', at) + 1;
    if (at == 0 || at == std::string::npos) continue;
    sum += std::strtod(line.c_str() + at, nullptr);
    ++count;
  }
  return count ? sum / count : 0;
}

void log_cleanup(const CleanupReport& report) {
  if (report.removed_namespaces.empty() && report.killed_processes.empty()) return;
  spdlog::warn("emu: removed leftovers of earlier runs (their launcher died): {} namespace(s), {} process(es)",
               report.removed_namespaces.size(), report.killed_processes.size());
}

struct HostAtStart {
  nlohmann::json description;
  CpuTimes cpu;
};

// The ranks wrote their own folders (rank 0: the run folder, rank R:
// rank<R>/); the run's manifest gets the backend's description, the host's
// load and CPU use over the run, every rank's checksum and the WAN totals.
void merge_results(const fs::path& dir, EmuNetwork& network, const EmuTrainingRequest& request,
                   const HostAtStart& host_start, const LaunchReport& launch, double peer_timeout_s,
                   EmuTrainingResult& result) {
  write_file(dir / "link.csv", network.replay().link_csv());
  nlohmann::json manifest = read_json(dir / "manifest.json");
  nlohmann::json summary = manifest.value("summary", nlohmann::json::object());
  if (!summary.contains("mean_iteration_ms")) summary["mean_iteration_ms"] = mean_iteration_ms(dir / "iterations.csv");
  result.mean_iteration_ms = summary["mean_iteration_ms"].get<double>();
  nlohmann::json checksums = nlohmann::json::array();
  nlohmann::json pacing_by_rank = nlohmann::json::array();
  for (int rank = 0; rank < request.config.nodes; ++rank) {
    const fs::path path = rank == 0 ? dir / "manifest.json" : dir / fmt::format("rank{}", rank) / "manifest.json";
    const auto rank_summary = rank == 0 ? summary : read_json(path).value("summary", nlohmann::json::object());
    const auto own = rank_summary.value("checksums", nlohmann::json::array());
    checksums.push_back(own.empty() ? nlohmann::json(nullptr) : own.front());
    pacing_by_rank.push_back(rank_summary.value("pacing", nlohmann::json(nullptr)));
  }
  uint64_t wire = 0;
  nlohmann::json links = nlohmann::json::object();
  for (const auto& totals : network.replay().totals()) {
    wire += totals.wire_bytes;
    links[totals.link] = {{"wire_bytes", totals.wire_bytes}, {"packets", totals.packets}};
  }
  const nlohmann::json counters = network.counters();
  for (auto& [name, link] : links.items()) {
    for (const auto& [key, value] : counters["links"][name].items())
      if (key != "wire_bytes" && key != "packets") link[key] = value;  // drops, losses, the delay line's lateness
  }
  summary["checksums"] = checksums;
  summary["wan_bytes"] = wire;
  summary["wan_links"] = links;
  summary["network_s"] = network.replay().now_s();
  manifest["backend"] = "emu";
  manifest["transport"] = "tcp (one process per node, Linux network namespaces)";
  manifest["compute_time_model"] = "measured (wall clock, real processes)";
  manifest["emulation"] = network.describe();
  manifest["emulation"]["peer_timeout_s"] = peer_timeout_s;
  manifest["emulation"]["clock"] =
      fmt::format("network (trace) time 0 is when rank 0 started training, {:.2f} s after the node processes "
                  "started (they load their data, build their nodes and connect first); every rank's times count "
                  "from its own start of training; until then every link holds its first step",
                  launch.clock_started_after_s);
  manifest["emulation"]["replay"] = {{"steps_applied", network.replay().steps_applied()},
                                     {"worst_step_lateness_s", network.replay().worst_step_lateness_s()}};
  const nlohmann::json cpu_use = cpu_use_between(host_start.cpu, cpu_times());
  const std::vector<std::string> behind = host_fell_behind(cpu_use, links, pacing_by_rank);
  manifest["host"] = {{"at_start", host_start.description},
                      {"at_end", host_description()},
                      {"cpu_over_run", cpu_use},
                      {"fell_behind", behind}};
  if (!behind.empty())
    spdlog::warn("emu{}: the host fell behind: {}; this run's times hold the host's delays as well as the network's "
                 "(manifest.json host.fell_behind): rerun on a quieter host before quoting them",
                 request.label.empty() ? "" : " " + request.label, fmt::join(behind, "; "));
  manifest["summary"] = summary;
  write_file(dir / "manifest.json", manifest.dump(2) + "\n");
}

}  // namespace

double peer_timeout_for(const net::TopologyConfig& network, double requested_s) {
  double longest = 0;
  for (const auto& [key, direction] : network.wan) longest = std::max(longest, net::longest_outage_s(direction));
  return std::max(requested_s, longest > 0 ? 2 * longest + 30 : 0.0);
}

EmuTrainingResult run_emulated_training(const EmuTrainingRequest& request) {
  check_privileges();
  if (request.config.nodes != request.network.total_nodes())
    throw EmuError(fmt::format("nodes: the network has {} node(s) but the run asks for {}", request.network.total_nodes(),
                               request.config.nodes));
  log_cleanup(cleanup_orphans());
  const fs::path dir = request.config.out_dir;
  if (dir.empty()) throw EmuError("an emulated run needs a results folder (out_dir)");
  fs::create_directories(dir);
  const HostAtStart host_start{host_description(), cpu_times()};
  // A Ctrl-C from here on is handled, never fatal: the emu backend holds
  // StopOnSignals while it runs (emu/emu_backend.h).
  EmulationPlan plan = plan_emulation(request.network, unused_run_id());
  EmuNetworkOptions options;
  options.delay = request.delay;
  options.kind = "run";
  options.description = request.description;
  EmuNetwork network(std::move(plan), options);
  const EmulationPlan& built = network.plan();
  spdlog::info("emu: network {} up in {:.2f} s ({} router(s), {} node(s), delay by {})", built.prefix,
               network.setup_s(), built.routers.size(), built.nodes.size(), to_string(network.delay_method()));
  throw_if_stop_requested();

  const double peer_timeout_s = peer_timeout_for(request.network, request.config.peer_timeout_s);
  std::vector<NodeProcess> nodes;
  for (const auto& node : built.nodes) {
    train::TrainConfig c = request.config;
    c.transport = "tcp";
    c.rank = node.rank;
    c.master_addr = built.nodes.front().address;
    c.master_port = kMasterPort;
    c.listen_host = node.address;
    c.advertise_host = node.address;
    c.peer_timeout_s = peer_timeout_s;
    c.quiet = false;  // the logs keep rank 0's progress; show_rank0 decides what is echoed
    NodeProcess process;
    process.rank = node.rank;
    process.netns = node.netns;
    process.argv = request.arguments(c);
    process.argv.insert(process.argv.begin(), request.program);
    nodes.push_back(std::move(process));
  }
  LaunchOptions launch_options;
  launch_options.logs_dir = (dir / "logs").string();
  // The trace starts with training, as it does on the sim backend: rank 0
  // marks the moment (core/train/run/training_clock.h), after its setup.
  launch_options.clock_file = (dir / train::kTrainingStartedFile).string();
  launch_options.activity_file = (dir / "iterations.csv").string();
  launch_options.show_rank0 = request.show_rank0;
  launch_options.progress_interval_s = request.show_rank0 ? 10 : 30;
  launch_options.stall_timeout_s = request.stall_timeout_s;
  launch_options.label = request.label;
  const LaunchReport launch = run_nodes(network, nodes, launch_options);
  std::error_code ignored;
  fs::remove(launch_options.clock_file, ignored);  // a signal between processes, not a result
  network.replay().stop();  // a replay error fails the run here, named
  EmuTrainingResult result;
  result.wall_s = launch.wall_s;
  merge_results(dir, network, request, host_start, launch, peer_timeout_s, result);
  return result;
}

}  // namespace st::emu
