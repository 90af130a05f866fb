#include "apps/run_jobs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <spawn.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "apps/run_parts.h"
#include "core/runtime/stop_request.h"

extern char** environ;

namespace st::apps {
namespace fs = std::filesystem;

namespace {

std::string job_name(const RunJob& job) {
  std::string name = job.relative;
  for (auto& c : name)
    if (c == '/') c = '_';
  return name;
}

}  // namespace

std::vector<std::string> job_command(const RunJob& job, const JobsOptions& options) {
  if (options.command) return options.command(job);
  std::vector<std::string> args{options.program, "run",       options.scenario_file, "--backend", options.backend,
                                "--out",         options.out.string(), "--only-system", job.label,
                                "--only-seed",   std::to_string(job.seed)};
  if (options.quiet) args.push_back("--quiet");
  if (options.iterations > 0) {
    args.push_back("--iterations");
    args.push_back(std::to_string(options.iterations));
  }
  if (options.seeds > 0) {
    args.push_back("--seeds");
    args.push_back(std::to_string(options.seeds));
  }
  if (!options.seed_list.empty()) {
    args.push_back("--seed-list");
    args.push_back(fmt::format("{}", fmt::join(options.seed_list, ",")));
  }
  if (options.timeline) args.push_back("--timeline");
  if (!options.mtu.empty()) {
    args.push_back("--mtu");
    args.push_back(options.mtu);
  }
  if (options.stage_sample >= 0) {
    args.push_back("--stage-sample");
    args.push_back(fmt::format("{}", options.stage_sample));
  }
  if (!options.network.empty()) {
    args.push_back("--network");
    args.push_back(options.network);
  }
  if (options.label_skew >= 0) {
    args.push_back("--label-skew");
    args.push_back(fmt::format("{}", options.label_skew));
  }
  return args;
}

namespace {

// posix_spawn rather than fork: the parent may hold LibTorch's threads.
// - The child gets its own process group, so a terminal's Ctrl-C reaches
//   only the parent, which then passes the signal on once (a second one
//   would make a child exit at once instead of finishing its step).
// - SIGINT and SIGTERM start blocked: one that comes before the child has
//   installed its handlers waits for them (start_as_job_child unblocks them)
//   instead of killing it without a trace.
// - Its stdin is the read end of `lifeline`, whose write end only the
//   parent holds: when the parent is gone (a second signal, SIGKILL, an
//   out-of-memory kill), the child reads end-of-file and stops at its next
//   step like an interrupted run; and it never reads the terminal.
// - It runs /proc/self/exe: this very binary, even if the file is rebuilt
//   or removed while the runs go on.
pid_t start_child(const RunJob& job, const JobsOptions& options, int lifeline) {
  const auto args = job_command(job, options);
  std::vector<char*> argv;
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const std::string log = job_log_path(options.out, job).string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, lifeline, STDIN_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t blocked;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &blocked);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0)
    throw std::runtime_error(fmt::format("cannot start {} for {} (output {}): {}", options.program, job.relative, log,
                                         std::strerror(error)));
  return pid;
}

// The children are waited for by pid: a SIGCHLD that the parent inherited
// as ignored would make the kernel reap them first (waitpid: ECHILD), so
// it is the default while they run.
class DefaultChildSignal {
 public:
  DefaultChildSignal() {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    sigaction(SIGCHLD, &action, &previous_);
  }
  ~DefaultChildSignal() { sigaction(SIGCHLD, &previous_, nullptr); }
  DefaultChildSignal(const DefaultChildSignal&) = delete;
  DefaultChildSignal& operator=(const DefaultChildSignal&) = delete;

 private:
  struct sigaction previous_ {};
};

// The pipe whose read end is every child's stdin (see start_child).
class Lifeline {
 public:
  Lifeline() {
    if (::pipe2(fds_, O_CLOEXEC) != 0)
      throw std::runtime_error(fmt::format("--jobs: cannot make a pipe: {}", std::strerror(errno)));
  }
  ~Lifeline() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;
  int read_end() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
};

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "unknown status";
}

}  // namespace

bool job_succeeded(const std::filesystem::path& out, const RunJob& job) {
  std::ifstream in(job_outcome_path(out, job));
  if (!in) return false;
  try {
    return !nlohmann::json::parse(in).contains("error");
  } catch (const std::exception&) {
    return false;
  }
}

RunOutcome collect_job(const RunJob& job, const JobsOptions& options, const std::string& ended, double wall_s) {
  RunOutcome outcome;
  outcome.seed = job.seed;
  outcome.dir = job.relative;
  const auto outcome_file = job_outcome_path(options.out, job);
  const auto log = job_log_path(options.out, job).string();
  std::ifstream in(outcome_file);
  if (!in) {
    outcome.error = fmt::format("the run's process ended ({}) without an outcome; its output: {}", ended, log);
  } else {
    try {
      const auto j = nlohmann::json::parse(in);
      const std::string error = j.value("error", std::string());
      if (error.empty()) {
        outcome = read_outcome((options.out / job.relative).string(), job.relative, job.seed, options.target_accuracy,
                               options.report_targets);
        outcome.mean_iteration_s = j.at("mean_iteration_s").get<double>();
      } else {
        outcome.error = error;
      }
    } catch (const std::exception& e) {
      outcome.error = fmt::format("{}: {} (the run's output: {})", outcome_file.string(), e.what(), log);
    }
  }
  outcome.host_wall_s = wall_s;
  return outcome;
}

namespace {

struct Running {
  std::size_t index;
  pid_t pid;
  std::chrono::steady_clock::time_point started;
  bool asked_to_stop = false;
};

// The last complete line a child wrote to its log ("" when none yet): its
// trainer's latest progress or evaluation line. Only the file's tail is
// read, since a long run's log grows for hours.
std::string last_log_line(const fs::path& log) {
  constexpr std::streamoff kTail = 4096;
  std::ifstream in(log, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > kTail ? size - kTail : 0;
  in.seekg(from);
  std::string tail(static_cast<std::size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  const auto end = tail.find_last_of('\n');  // a line still being written is left out
  if (end == std::string::npos) return {};
  tail.resize(end);
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  const auto begin = tail.find_last_of('\n');
  return begin == std::string::npos ? tail : tail.substr(begin + 1);
}

// One line per running child: how long it has run and its latest output,
// so that hours of runs side by side show where they are.
void report_progress(const std::vector<Running>& running, const std::vector<RunJob>& jobs, const JobsOptions& options,
                     std::size_t finished) {
  const auto now = std::chrono::steady_clock::now();
  for (const auto& r : running) {
    const auto& job = jobs[r.index];
    const auto line = last_log_line(job_log_path(options.out, job));
    spdlog::info("[{} of {} finished] {} seed {} (pid {}, {:.0f} wall s): {}", finished, jobs.size(), job.label,
                 job.seed, r.pid, std::chrono::duration<double>(now - r.started).count(),
                 line.empty() ? "no output yet" : line);
  }
}

}  // namespace

fs::path job_log_path(const fs::path& out, const RunJob& job) { return out / "logs" / (job_name(job) + ".log"); }

fs::path job_outcome_path(const fs::path& out, const RunJob& job) {
  return out / "logs" / (job_name(job) + ".outcome.json");
}

void start_as_job_child() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
  struct stat info {};
  if (::fstat(STDIN_FILENO, &info) != 0 || !S_ISFIFO(info.st_mode)) return;
  std::thread([] {
    char byte = 0;
    while (true) {
      const ssize_t n = ::read(STDIN_FILENO, &byte, 1);
      if (n > 0 || (n < 0 && errno == EINTR)) continue;
      runtime::request_stop(SIGHUP);
      return;
    }
  }).detach();
}

void write_job_outcome(const fs::path& path, const RunOutcome& outcome) {
  nlohmann::json j;
  j["mean_iteration_s"] = outcome.mean_iteration_s;
  if (!outcome.error.empty()) j["error"] = outcome.error;
  write_file_atomically(path, j.dump(2) + "\n");
}

std::vector<RunOutcome> run_jobs(const std::vector<RunJob>& jobs, const JobsOptions& options) {
  if (options.jobs < 1) throw std::invalid_argument("--jobs: must be at least 1");
  fs::create_directories(options.out / "logs");
  for (const auto& job : jobs) fs::remove(job_outcome_path(options.out, job));
  const DefaultChildSignal default_child_signal;
  const Lifeline lifeline;
  std::vector<RunOutcome> outcomes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    outcomes[i].seed = jobs[i].seed;
    outcomes[i].dir = jobs[i].relative;
  }
  std::vector<Running> running;
  std::size_t next = 0, finished = 0;
  int stop_signal = 0;
  const auto progress_every = std::chrono::duration<double>(options.progress_every_s);
  auto last_progress = std::chrono::steady_clock::now();
  while (finished < jobs.size()) {
    if (stop_signal == 0) stop_signal = runtime::stop_requested();
    while (stop_signal == 0 && next < jobs.size() && static_cast<int>(running.size()) < options.jobs) {
      const auto& job = jobs[next];
      try {
        running.push_back({next, start_child(job, options, lifeline.read_end()), std::chrono::steady_clock::now()});
        spdlog::info("[{}/{}] {} seed {}: started (pid {}, output in {})", next + 1, jobs.size(), job.label, job.seed,
                     running.back().pid, job_log_path(options.out, job).string());
      } catch (const std::exception& e) {  // this run fails; the others go on
        outcomes[next].error = e.what();
        spdlog::error("{} seed {}: {}", job.label, job.seed, e.what());
        ++finished;
      }
      ++next;
    }
    if (stop_signal != 0) {
      for (auto& r : running)
        if (!r.asked_to_stop) {
          ::kill(r.pid, stop_signal);  // our own child, by its pid: the signal we got, so its files say the same
          r.asked_to_stop = true;
        }
      for (; next < jobs.size(); ++next) {  // never started
        outcomes[next].error = fmt::format("interrupted by signal {} before this run started", stop_signal);
        ++finished;
      }
    }
    for (auto it = running.begin(); it != running.end();) {
      int status = 0;
      const pid_t reaped = ::waitpid(it->pid, &status, WNOHANG);
      if (reaped == 0 || (reaped < 0 && errno == EINTR)) {
        ++it;
        continue;
      }
      // ECHILD (someone else reaped it): what it left still tells.
      const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - it->started).count();
      const auto& job = jobs[it->index];
      outcomes[it->index] = collect_job(job, options, describe_status(reaped < 0 ? 0 : status), wall_s);
      spdlog::info("{} seed {}: {}", job.label, job.seed,
                   outcomes[it->index].error.empty() ? fmt::format("finished in {:.1f} wall s", wall_s)
                                                     : "failed: " + outcomes[it->index].error);
      ++finished;
      it = running.erase(it);
    }
    if (options.progress_every_s > 0 && !running.empty() &&
        std::chrono::steady_clock::now() - last_progress >= progress_every) {
      report_progress(running, jobs, options, finished);
      last_progress = std::chrono::steady_clock::now();
    }
    if (finished < jobs.size()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return outcomes;
}

}  // namespace st::apps
