#include "apps/slurm_launcher.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "apps/run_parts.h"
#include "core/runtime/stop_request.h"

namespace st::apps {
namespace fs = std::filesystem;

namespace {

// Single-quoted for bash: the array script and the commands run here.
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

std::string joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += (out.empty() ? "" : " ") + quoted(a);
  return out;
}

struct Captured {
  int status = -1;  // exit status; -1: could not run
  std::string output;  // stdout and stderr
};

// Slurm's client tools, run with their output captured. Their arguments are
// ours (job ids, our own paths), quoted above.
Captured capture(const std::vector<std::string>& args) {
  Captured out;
  FILE* pipe = ::popen((joined(args) + " 2>&1").c_str(), "r");
  if (!pipe) return out;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.output.append(buffer, n);
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

fs::path slurm_dir(const fs::path& out) { return out / "slurm"; }

// Each submission: the array job's id and, by array index, its jobs' folders.
struct Submission {
  std::string job_id;
  std::vector<std::string> tasks;  // RunJob::relative, by array index
};

// OUT/slurm/'s own files; a damaged one is named.
nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not what `stellatrain` wrote there ({}); remove the results folder's "
                                         "slurm/ to start its Slurm runs over", path.string(), e.what()));
  }
}

std::vector<Submission> read_submissions(const fs::path& out) {
  std::vector<Submission> submissions;
  const fs::path path = slurm_dir(out) / "submissions.json";
  if (!fs::exists(path)) return submissions;
  const auto j = read_json(path);
  try {
    for (const auto& s : j)
      submissions.push_back({s.at("job_id").get<std::string>(), s.at("tasks").get<std::vector<std::string>>()});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: {}", path.string(), e.what()));
  }
  return submissions;
}

void write_json(const fs::path& path, const nlohmann::json& j) { write_file_atomically(path, j.dump(2) + "\n"); }

void add_submission(const fs::path& out, const Submission& s) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& old : read_submissions(out)) all.push_back({{"job_id", old.job_id}, {"tasks", old.tasks}});
  all.push_back({{"job_id", s.job_id}, {"tasks", s.tasks}});
  write_json(slurm_dir(out) / "submissions.json", all);
}

// One array job's tasks still queued or running, by array index. A job
// Slurm no longer knows ("Invalid job id") has none; any other failure of
// squeue (a busy or unreachable controller) is retried, then an error:
// taken for "finished", it would resubmit runs that are still running.
std::vector<std::size_t> queued_indices(const std::string& job_id) {
  Captured q;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::seconds(2 * attempt));
    q = capture({"squeue", "--noheader", "--array", "--jobs", job_id, "--format", "%K"});
    if (q.status == 0) break;
    if (q.output.find("Invalid job id") != std::string::npos) return {};
  }
  if (q.status != 0)
    throw std::runtime_error(fmt::format("--slurm: squeue --jobs {} failed{}: {}", job_id,
                                         q.status == 127 ? " (is Slurm's client installed?)" : "", trimmed(q.output)));
  std::vector<std::size_t> indices;
  std::istringstream lines(q.output);
  // With --array each task has a line of its own (its index).
  for (std::string index; lines >> index;)
    if (index.find_first_not_of("0123456789") == std::string::npos) indices.push_back(std::stoul(index));
  return indices;
}

// The folders of the runs Slurm still has queued or running, from every
// earlier submission.
std::set<std::string> waiting_tasks(const fs::path& out) {
  std::set<std::string> waiting;
  for (const auto& s : read_submissions(out))
    for (const std::size_t i : queued_indices(s.job_id))
      if (i < s.tasks.size()) waiting.insert(s.tasks[i]);
  return waiting;
}

// One command at a time per results folder: two submitting at once would
// each take the other's queued runs for missing. Held until the process
// ends or the lock goes.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (fd_ < 0) throw std::runtime_error(fmt::format("--slurm: cannot open {}: {}", path.string(), std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd_);
      throw std::runtime_error(fmt::format(
          "--slurm: another `stellatrain` is submitting to or waiting on this results folder ({} is locked)",
          path.string()));
    }
  }
  ~FolderLock() { ::close(fd_); }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_;
};

std::string array_job_name(const std::string& name) {
  std::string out = "st-" + name;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return out;
}

// The array script: one `case` branch per task, each the job's command
// with its output to the job's log (as --jobs writes it).
fs::path write_array_script(const std::vector<RunJob>& jobs, const JobsOptions& how, const SlurmOptions& slurm,
                            const std::string& name, std::size_t number) {
  const fs::path dir = slurm_dir(how.out);
  const fs::path script = dir / fmt::format("array-{}.sh", number);
  std::ofstream f(script);
  f << "#!/bin/bash\n";
  f << "# Written by `stellatrain` (apps/slurm_launcher.cc): " << jobs.size() << " run(s) of " << name << ".\n";
  f << "#SBATCH --job-name=" << array_job_name(name) << "\n";
  f << "#SBATCH --array=0-" << jobs.size() - 1;
  if (slurm.max_parallel > 0) f << "%" << slurm.max_parallel;
  f << "\n";
  // --output goes on sbatch's command line (paths may hold spaces); every
  // path in the script is absolute, so the tasks' working folder does not
  // matter.
  f << "#SBATCH --cpus-per-task=" << slurm.cpus << "\n";
  if (!slurm.partition.empty()) f << "#SBATCH --partition=" << slurm.partition << "\n";
  if (!slurm.time.empty()) f << "#SBATCH --time=" << slurm.time << "\n";
  if (!slurm.mem.empty()) f << "#SBATCH --mem=" << slurm.mem << "\n";
  if (!slurm.gres.empty()) f << "#SBATCH --gres=" << slurm.gres << "\n";
  for (const auto& option : slurm.extra) f << "#SBATCH " << option << "\n";
  f << "case \"$SLURM_ARRAY_TASK_ID\" in\n";
  for (std::size_t i = 0; i < jobs.size(); ++i)
    f << "  " << i << ") exec " << joined(job_command(jobs[i], how)) << " > "
      << quoted(job_log_path(how.out, jobs[i]).string()) << " 2>&1 ;;\n";
  f << "  *) echo \"no task $SLURM_ARRAY_TASK_ID in this array\" >&2; exit 2 ;;\n";
  f << "esac\n";
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", script.string()));
  return script;
}

std::size_t count_succeeded(const std::vector<RunJob>& jobs, const fs::path& out) {
  std::size_t n = 0;
  for (const auto& job : jobs) n += job_succeeded(out, job) ? 1 : 0;
  return n;
}

}  // namespace

void add_slurm_options(CLI::App* command, SlurmOptions& o) {
  const std::string group = "Slurm (docs/byo.md)";
  command->add_flag("--slurm", o.enabled,
                    "Run every run as a task of a Slurm job array (sbatch); run the same command again to merge "
                    "what finished and resubmit only what is missing")
      ->group(group);
  command->add_option("--slurm-partition", o.partition, "sbatch --partition")->group(group);
  command->add_option("--slurm-time", o.time, "sbatch --time, per run (e.g. 30 or 2:00:00)")->group(group);
  command->add_option("--slurm-cpus", o.cpus, "sbatch --cpus-per-task")->check(CLI::Range(1, 1024))->capture_default_str()->group(group);
  command->add_option("--slurm-mem", o.mem, "sbatch --mem (e.g. 8G)")->group(group);
  command->add_option("--slurm-gres", o.gres, "sbatch --gres (e.g. gpu:1)")->group(group);
  command->add_option("--slurm-option", o.extra, "A further sbatch option, as given (e.g. --qos=short); repeatable")
      ->group(group);
  command->add_option("--slurm-max-parallel", o.max_parallel, "At most this many runs at once (--array=...%N)")
      ->check(CLI::Range(1, 100000))
      ->group(group);
  command->add_flag("!--slurm-no-wait", o.wait,
                    "Submit and return: the jobs run on; the same command run later merges them")
      ->group(group);
}

void check_slurm_settings(const fs::path& out, const nlohmann::json& settings) {
  const fs::path path = slurm_dir(out) / "settings.json";
  if (!fs::exists(path)) {
    fs::create_directories(slurm_dir(out));
    return write_json(path, settings);
  }
  const auto earlier = read_json(path);
  // Every key of either: a setting only one of them has differs too.
  std::set<std::string> keys;
  for (const auto& [key, value] : settings.items()) keys.insert(key);
  if (earlier.is_object())
    for (const auto& [key, value] : earlier.items()) keys.insert(key);
  for (const auto& key : keys) {
    const auto before = earlier.find(key);
    const auto now = settings.find(key);
    const bool had = before != earlier.end(), has = now != settings.end();
    if (had && has && *before == *now) continue;
    throw std::invalid_argument(fmt::format(
        "--slurm: {} holds runs made with {} {}, not {}: resubmitting would mix them; choose another --out (or "
        "remove the folder)",
        out.string(), key, had ? before->dump() : std::string("(unset)"), has ? now->dump() : std::string("(unset)")));
  }
}

SlurmProgress run_on_slurm(const std::vector<RunJob>& jobs, const JobsOptions& how, const SlurmOptions& slurm,
                           const std::string& name) {
  fs::create_directories(how.out / "logs");
  fs::create_directories(slurm_dir(how.out));
  const FolderLock lock(slurm_dir(how.out) / "lock");
  const std::set<std::string> waiting = waiting_tasks(how.out);
  std::vector<RunJob> missing;
  SlurmProgress progress;
  for (const auto& job : jobs) {
    if (job_succeeded(how.out, job)) {
      ++progress.done;
    } else if (waiting.count(job.relative) == 0) {
      missing.push_back(job);
    }
  }
  if (!missing.empty()) {
    for (const auto& job : missing) {  // what an earlier try of these runs left
      fs::remove_all(how.out / job.relative);
      fs::remove(job_outcome_path(how.out, job));
    }
    const std::size_t number = read_submissions(how.out).size() + 1;
    const fs::path script = write_array_script(missing, how, slurm, name, number);
    // Slurm expands %a in --output; a '%' of the folder's own is doubled.
    std::string output = (slurm_dir(how.out) / fmt::format("array-{}-", number)).string();
    for (std::size_t at = output.find('%'); at != std::string::npos; at = output.find('%', at + 2)) output.insert(at, "%");
    const Captured submitted = capture({"sbatch", "--parsable", "--output=" + output + "%a.out", script.string()});
    if (submitted.status != 0)
      throw std::runtime_error(fmt::format("--slurm: sbatch {} failed{}: {}", script.string(),
                                           submitted.status == 127 ? " (is Slurm's client installed? "
                                                                     "scripts/install-deps.sh installs it)"
                                                                   : "",
                                           trimmed(submitted.output)));
    std::string job_id = trimmed(submitted.output);
    job_id = job_id.substr(job_id.rfind('\n') + 1);  // the last line; sbatch may warn first
    job_id = job_id.substr(0, job_id.find(';'));       // "id;cluster" on federated clusters
    if (job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos)
      throw std::runtime_error(fmt::format("--slurm: sbatch {} printed no job id: {}", script.string(),
                                           trimmed(submitted.output)));
    Submission record{job_id, {}};
    for (const auto& job : missing) record.tasks.push_back(job.relative);
    add_submission(how.out, record);
    progress.submitted = missing.size();
    spdlog::info("slurm: submitted job {}: {} run(s) of {} ({}), {} already done, {} still queued", job_id,
                 missing.size(), name, script.string(), progress.done, jobs.size() - progress.done - missing.size());
  } else if (progress.done < jobs.size()) {
    spdlog::info("slurm: {} run(s) of {} still queued or running, {} done", jobs.size() - progress.done, name,
                 progress.done);
  }
  auto still_waiting = [&] {
    const auto queued = waiting_tasks(how.out);
    std::size_t n = 0;
    for (const auto& job : jobs) n += queued.count(job.relative);
    return n;
  };
  progress.waiting = still_waiting();
  if (!slurm.wait) return progress;
  std::size_t reported = progress.waiting;
  while (progress.waiting > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(slurm.poll_s);
    while (std::chrono::steady_clock::now() < until && runtime::stop_requested() == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (runtime::stop_requested() != 0) {
      spdlog::warn("slurm: stopped waiting; {} run(s) go on in Slurm (squeue --me); run the same command again to "
                   "merge them",
                   progress.waiting);
      return progress;
    }
    progress.waiting = still_waiting();
    if (progress.waiting != reported) {
      spdlog::info("slurm: {}: {} of {} run(s) done, {} queued or running", name, count_succeeded(jobs, how.out),
                   jobs.size(), progress.waiting);
      reported = progress.waiting;
    }
  }
  progress.done = count_succeeded(jobs, how.out);
  return progress;
}

std::string slurm_job_failure(const fs::path& out, const RunJob& job) {
  const std::string log = job_log_path(out, job).string();
  std::ifstream outcome(job_outcome_path(out, job));
  if (outcome) {
    try {
      const auto j = nlohmann::json::parse(outcome);
      if (j.contains("error")) return j.at("error").get<std::string>();
    } catch (const std::exception&) {
    }
  }
  // The last submission that held it: what Slurm says of its task.
  const auto submissions = read_submissions(out);
  for (auto s = submissions.rbegin(); s != submissions.rend(); ++s) {
    for (std::size_t i = 0; i < s->tasks.size(); ++i) {
      if (s->tasks[i] != job.relative) continue;
      const std::string task = fmt::format("{}_{}", s->job_id, i);
      std::string state;
      const Captured accounted = capture({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs", task,
                                          "--format", "State,ExitCode"});
      if (accounted.status == 0 && !trimmed(accounted.output).empty()) state = trimmed(accounted.output);
      if (state.empty()) {  // no accounting (no slurmdbd): the controller's memory of recent jobs
        const Captured shown = capture({"scontrol", "--oneliner", "show", "job", task});
        const auto at = shown.output.find("JobState=");
        if (shown.status == 0 && at != std::string::npos)
          state = shown.output.substr(at + 9, shown.output.find(' ', at) - at - 9);
      }
      return fmt::format("did not finish on Slurm (job {}, task {}: {}); its output: {}", s->job_id, i,
                         state.empty() ? "state unknown" : state, log);
    }
  }
  return fmt::format("did not finish on Slurm (never submitted from this folder); its output: {}", log);
}

}  // namespace st::apps
