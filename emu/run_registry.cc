#include "emu/run_registry.h"

#include <dirent.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "emu/emu_plan.h"
#include "emu/netns.h"

namespace st::emu {
namespace {

std::string record_path(const std::string& run_id) { return std::string(kRegistryDir) + "/" + run_id + ".json"; }

void make_registry_dir() {
  std::string partial;
  std::stringstream parts(kRegistryDir);
  for (std::string part; std::getline(parts, part, '/');) {
    if (part.empty()) continue;
    partial += "/" + part;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST)
      throw EmuError(fmt::format("mkdir {}: {}", partial, std::strerror(errno)));
  }
}

bool process_exists(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

uint64_t process_start_ticks(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string text;
  if (!std::getline(in, text)) return 0;
  // The command name (field 2) may hold spaces and parentheses: fields
  // after it start behind the last ')'.
  const auto close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::stringstream rest(text.substr(close + 2));
  std::string field;
  for (int index = 3; rest >> field; ++index)
    if (index == 22) return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

bool owner_alive(const RunRecord& record) {
  return record.owner > 0 && process_start_ticks(record.owner) == record.owner_start_ticks &&
         record.owner_start_ticks != 0;
}

std::vector<RunRecord> list_runs() {
  std::vector<RunRecord> runs;
  DIR* dir = opendir(kRegistryDir);
  if (dir == nullptr) return runs;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name.size() != kRunIdLength + 5 || name.substr(kRunIdLength) != ".json") continue;
    RunRecord record;
    record.run_id = name.substr(0, kRunIdLength);
    if (!is_run_id(record.run_id)) continue;
    try {
      std::ifstream in(record_path(record.run_id));
      const auto json = nlohmann::json::parse(in);
      record.kind = json.value("kind", "");
      record.owner = json.value("owner_pid", 0);
      record.owner_start_ticks = json.value("owner_start_ticks", uint64_t{0});
      record.namespaces = json.value("namespaces", std::vector<std::string>{});
      record.description = json.value("description", "");
    } catch (const std::exception&) {
      // A torn record (its writer died mid-write) has no live owner: an orphan.
    }
    runs.push_back(record);
  }
  closedir(dir);
  std::sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) { return a.run_id < b.run_id; });
  return runs;
}

std::string unused_run_id() {
  const auto runs = list_runs();
  for (;;) {
    const std::string id = make_run_id();
    if (std::none_of(runs.begin(), runs.end(), [&](const RunRecord& r) { return r.run_id == id; }) &&
        access(run_log_path(id).c_str(), F_OK) != 0)
      return id;
  }
}

std::string run_log_path(const std::string& run_id) { return std::string(kRegistryDir) + "/" + run_id + ".log"; }

void make_run_registry_dir() { make_registry_dir(); }

RunRegistration::RunRegistration(const std::string& run_id, const std::string& kind,
                                 const std::vector<std::string>& namespaces, const std::string& description) {
  record_.run_id = run_id;
  record_.kind = kind;
  record_.owner = getpid();
  record_.owner_start_ticks = process_start_ticks(record_.owner);
  record_.namespaces = namespaces;
  record_.description = description;
  make_registry_dir();
  const nlohmann::json json = {{"run_id", run_id},
                               {"kind", kind},
                               {"owner_pid", record_.owner},
                               {"owner_start_ticks", record_.owner_start_ticks},
                               {"namespaces", namespaces},
                               {"description", description}};
  // Written aside and renamed: a reader never sees half a record.
  const std::string path = record_path(run_id);
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << json.dump(2) << "\n";
    if (!out) throw EmuError(fmt::format("cannot write {}", temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw EmuError(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
}

RunRegistration::~RunRegistration() {
  unlink(record_path(record_.run_id).c_str());
  unlink(run_log_path(record_.run_id).c_str());
}

void remove_run_namespaces(const std::string& run_id, const std::vector<std::string>& namespaces,
                           CleanupReport& report) {
  std::set<std::string> names(namespaces.begin(), namespaces.end());
  const std::string prefix = run_prefix(run_id);
  for (const auto& name : list_netns())
    if (name.compare(0, prefix.size(), prefix) == 0) names.insert(name);
  const pid_t self = getpid();
  for (const auto& name : names) {
    if (!netns_exists(name)) continue;
    std::vector<pid_t> inside = processes_in_netns(netns_inode(name));
    inside.erase(std::remove(inside.begin(), inside.end(), self), inside.end());
    for (const pid_t pid : inside) {
      if (kill(pid, SIGKILL) == 0) report.killed_processes.push_back(pid);
    }
    // SIGKILL is not instant: wait (bounded) until they are gone, so that
    // nothing holds the namespace once it is unmounted.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (const pid_t pid : inside)
      while (process_exists(pid) && process_start_ticks(pid) != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (delete_netns(name)) report.removed_namespaces.push_back(name);
  }
}

CleanupReport cleanup_orphans() {
  CleanupReport report;
  std::set<std::string> live, handled;
  for (const auto& run : list_runs()) {
    if (owner_alive(run)) {
      live.insert(run.run_id);
      report.live_runs.push_back(fmt::format("{} ({}, pid {})", run.run_id, run.kind.empty() ? "?" : run.kind, run.owner));
      continue;
    }
    remove_run_namespaces(run.run_id, run.namespaces, report);
    unlink(record_path(run.run_id).c_str());
    unlink(run_log_path(run.run_id).c_str());
    report.removed_runs.push_back(run.run_id);
    handled.insert(run.run_id);
  }
  // Namespaces of this scheme whose run left no record at all.
  for (const auto& name : list_netns()) {
    const std::string id = run_id_of(name);
    if (id.empty() || live.count(id) || handled.count(id)) continue;
    remove_run_namespaces(id, {}, report);
    handled.insert(id);
    report.removed_runs.push_back(id);
  }
  return report;
}

}  // namespace st::emu
