#pragma once
// Who owns which emulated network. Every run writes a record
// (/run/stellatrain/emu/<run id>.json: its owner's pid and start time, its
// kind, its namespaces) before it creates anything, and removes it after
// everything is gone. A run whose owner has died (SIGKILL, a crash) is an
// orphan: `stellatrain emu cleanup`, and the start of every emulated run,
// remove orphans' namespaces (and the processes still inside them), and
// nothing else: namespaces of live runs, and anything not named by this
// scheme, are left alone.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace st::emu {

inline constexpr const char* kRegistryDir = "/run/stellatrain/emu";

struct RunRecord {
  std::string run_id;
  std::string kind;  // "run" (stellatrain run), "up" (emu up), "test"
  pid_t owner = 0;
  uint64_t owner_start_ticks = 0;  // /proc/<pid>/stat field 22: tells a reused pid apart
  std::vector<std::string> namespaces;
  std::string description;  // e.g. the scenario
};

// The calling process's start time in clock ticks since boot.
uint64_t process_start_ticks(pid_t pid);
bool owner_alive(const RunRecord& record);

std::vector<RunRecord> list_runs();
// A fresh run id that no record uses.
std::string unused_run_id();
// Where a detached `emu up` writes its output (removed with its record).
std::string run_log_path(const std::string& run_id);
// Creates kRegistryDir (and its parents) when missing.
void make_run_registry_dir();

// Writes the record for this process (RAII: the destructor removes it).
class RunRegistration {
 public:
  RunRegistration(const std::string& run_id, const std::string& kind, const std::vector<std::string>& namespaces,
                  const std::string& description);
  ~RunRegistration();
  RunRegistration(const RunRegistration&) = delete;
  RunRegistration& operator=(const RunRegistration&) = delete;

 private:
  RunRecord record_;
};

struct CleanupReport {
  std::vector<std::string> removed_namespaces;
  std::vector<pid_t> killed_processes;
  std::vector<std::string> removed_runs;  // run ids whose records were removed
  std::vector<std::string> live_runs;     // left alone: "id (kind, pid N)"
};

// Removes every orphan: runs whose owner is dead, and namespaces named
// "st-<id>-..." whose run has no record. Kills (SIGKILL) the processes
// still inside those namespaces first, then unmounts them.
CleanupReport cleanup_orphans();

// Removes one run's namespaces (and what is inside), whoever owns it: the
// owner's own teardown, and `emu down` after its owner has gone.
void remove_run_namespaces(const std::string& run_id, const std::vector<std::string>& namespaces,
                           CleanupReport& report);

}  // namespace st::emu
