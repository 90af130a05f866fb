#include "emu/launcher.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/runtime/stop_request.h"
#include "emu/process.h"

namespace st::emu {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string last_line(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last.empty() ? "(no output)" : last;
}

uint64_t file_size(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<uint64_t>(info.st_size) : 0;
}

// The nodes of one run; whatever is still running when this goes away is
// killed and reaped, so no path leaves a process behind.
class NodeGroup {
 public:
  ~NodeGroup() { stop(std::chrono::seconds(0)); }

  void add(int rank, pid_t pid) { running_.push_back({rank, pid}); }
  bool empty() const { return running_.empty(); }

  // Reaps what has exited: (rank, wait status) pairs.
  std::vector<std::pair<int, int>> reap() {
    std::vector<std::pair<int, int>> done;
    for (auto it = running_.begin(); it != running_.end();) {
      int status = 0;
      const pid_t result = waitpid(it->second, &status, WNOHANG);
      if (result == it->second) {
        done.emplace_back(it->first, status);
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
    return done;
  }

  // SIGTERM, then SIGKILL after `grace`; reaps everything.
  void stop(std::chrono::milliseconds grace) {
    if (running_.empty()) return;
    for (const auto& [rank, pid] : running_) kill(pid, grace.count() > 0 ? SIGTERM : SIGKILL);
    const auto deadline = Clock::now() + grace;
    while (!running_.empty() && Clock::now() < deadline) {
      reap();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (const auto& [rank, pid] : running_) {
      kill(pid, SIGKILL);
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    running_.clear();
  }

 private:
  std::vector<std::pair<int, pid_t>> running_;
};

// Shows rank 0's new output lines as they are written.
class LogEcho {
 public:
  explicit LogEcho(std::string path) : path_(std::move(path)) {}
  void poll() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    for (std::size_t end; (end = partial_.find('\n')) != std::string::npos;) {
      std::fprintf(stderr, "  rank 0 | %s\n", partial_.substr(0, end).c_str());
      partial_.erase(0, end + 1);
    }
  }

 private:
  std::string path_;
  std::size_t offset_ = 0;
  std::string partial_;
};

std::string progress_line(EmuNetwork& network, const std::string& label, double elapsed_s) {
  std::string line = fmt::format("emu {}: {:.0f} s", label, elapsed_s);
  if (!network.replay().clock_started()) return line + ", waiting for rank 0 to connect";
  line += fmt::format(", network time {:.0f} s", network.replay().now_s());
  for (const auto& rate : network.replay().last_second())
    line += fmt::format("; {} {:.1f} of {:.1f} Mbps", rate.link, rate.delivered_mbps, rate.configured_mbps);
  return line;
}

}  // namespace

EmuInterrupted::EmuInterrupted(int signal)
    : EmuError(fmt::format("interrupted by signal {} ({}): the nodes were stopped and the emulated network removed",
                           signal, strsignal(signal))),
      signal_(signal) {}

void throw_if_stop_requested() {
  if (const int signal = runtime::stop_requested()) throw EmuInterrupted(signal);
}

LaunchReport run_nodes(EmuNetwork& network, const std::vector<NodeProcess>& nodes, const LaunchOptions& options) {
  fs::create_directories(options.logs_dir);
  const auto log_of = [&](int rank) { return (fs::path(options.logs_dir) / fmt::format("rank{}.log", rank)).string(); };
  NodeGroup group;
  const auto launched = Clock::now();
  LaunchReport report;
  for (const auto& node : nodes) {
    fs::remove(log_of(node.rank));
    SpawnOptions spawn_options;
    spawn_options.netns = node.netns;
    spawn_options.argv = node.argv;
    spawn_options.output_path = log_of(node.rank);
    // A terminal's Ctrl-C goes to the launcher alone, which stops the nodes itself.
    spawn_options.new_process_group = true;
    group.add(node.rank, spawn(spawn_options));
  }
  if (options.clock_file.empty()) network.replay().start_clock();
  LogEcho echo(log_of(nodes.front().rank));
  auto last_progress = Clock::now();
  auto last_activity = Clock::now();
  uint64_t activity_size = 0;
  while (!group.empty()) {
    if (const int signal = runtime::stop_requested()) {
      group.stop(std::chrono::seconds(2));
      throw EmuInterrupted(signal);
    }
    for (const auto& [rank, status] : group.reap()) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      group.stop(std::chrono::seconds(0));  // the others would only wait for it
      if (options.show_rank0) echo.poll();
      throw EmuError(fmt::format("rank {} ({}) ended with {}: {} (log: {})", rank, nodes.at(rank).netns,
                                 describe_wait_status(status), last_line(log_of(rank)), log_of(rank)));
    }
    if (!network.replay().clock_started() && fs::exists(options.clock_file)) {
      network.replay().start_clock();
      report.clock_started_after_s = seconds_since(launched);
    }
    if (options.show_rank0) echo.poll();
    const uint64_t size =
        file_size(log_of(nodes.front().rank)) + (options.activity_file.empty() ? 0 : file_size(options.activity_file));
    if (size != activity_size) {
      activity_size = size;
      last_activity = Clock::now();
    } else if (seconds_since(last_activity) > options.stall_timeout_s) {
      group.stop(std::chrono::seconds(2));
      throw EmuError(fmt::format("no progress from rank 0 for {:.0f} s (its log: {}): stopped", options.stall_timeout_s,
                                 log_of(nodes.front().rank)));
    }
    if (seconds_since(last_progress) >= options.progress_interval_s) {
      spdlog::info("{}", progress_line(network, options.label, seconds_since(launched)));
      last_progress = Clock::now();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!network.replay().clock_started()) report.clock_started_after_s = seconds_since(launched);
  if (options.show_rank0) echo.poll();
  report.wall_s = seconds_since(launched);
  return report;
}

}  // namespace st::emu
