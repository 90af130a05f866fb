#pragma once
// Starting the engine's processes on the emulated network and seeing them
// through: one `stellatrain train --transport tcp --rank R` process per
// node, inside the node's namespace; their output in log files (rank 0's
// lines also shown as they come); progress lines; the replay clock started
// when rank 0 is about to connect; and every way a run can end handled:
// all ranks done, a rank failing or killed (the others are stopped at once,
// not left to time out), no progress for too long, or a stop request
// (SIGINT/SIGTERM/SIGHUP to the launcher, core/runtime/stop_request.h: the
// nodes are stopped and the caller tears the network down). Node processes die with the launcher even after a SIGKILL
// (PR_SET_PDEATHSIG).
#include <sys/types.h>

#include <string>
#include <vector>

#include "emu/emu_network.h"
#include "emu/netns.h"

namespace st::emu {

// A stop was requested (SIGINT, SIGTERM or SIGHUP): the run was stopped and
// its network removed. signal() is the one that came.
class EmuInterrupted : public EmuError {
 public:
  explicit EmuInterrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws EmuInterrupted when a stop was requested (a signal:
// core/runtime/stop_request.h).
void throw_if_stop_requested();

struct NodeProcess {
  int rank = 0;
  std::string netns;
  std::vector<std::string> argv;  // argv[0]: the program
};

struct LaunchOptions {
  std::string logs_dir;          // rank<R>.log for each rank (created)
  std::string clock_file;        // start the replay clock when this file exists ("" = at launch)
  std::string activity_file;     // rank 0's output besides its log: its growth counts as progress
  bool show_rank0 = true;        // echo rank 0's output lines
  double progress_interval_s = 10;
  double stall_timeout_s = 600;  // no new output from rank 0 for this long: failed
  std::string label;             // e.g. "stellatrain seed 1", for progress lines
};

struct LaunchReport {
  double wall_s = 0;              // launch to the last exit
  double clock_started_after_s = 0;  // launch to the replay clock's start
};

// Runs the nodes to the end. Throws EmuError naming the rank that failed
// (its exit status and the last line of its log) or the stall, and
// EmuInterrupted once a stop is requested (runtime::stop_requested); in
// every case no node process is left running.
LaunchReport run_nodes(EmuNetwork& network, const std::vector<NodeProcess>& nodes, const LaunchOptions& options);

}  // namespace st::emu
