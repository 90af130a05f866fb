#pragma once
// Starting programs inside a network namespace: fork, setns, exec. Used for
// the node processes (`stellatrain train`) and for the one command the
// emulator runs, iptables (docs/emu.md says why it is the command and not
// libiptc). Everything the child does between fork and exec is
// async-signal-safe, so this may be called while other threads run.
#include <sys/types.h>

#include <string>
#include <vector>

namespace st::emu {

struct SpawnOptions {
  std::string netns;                  // "" = stay in the caller's namespace
  std::vector<std::string> argv;      // argv[0] is looked up in PATH when it has no '/'
  std::vector<std::string> env;       // extra "NAME=value" entries on top of the caller's environment
  std::string output_path;            // stdout and stderr go here ("" = /dev/null), appended
  bool die_with_parent = true;        // PR_SET_PDEATHSIG SIGKILL: no orphan outlives a SIGKILLed launcher
  bool new_process_group = false;     // setpgid(0, 0): a terminal's Ctrl-C reaches only the launcher
  bool new_session = false;           // setsid(): a daemon, detached from the terminal
};

// Starts the program; returns its pid. Throws EmuError naming the program
// when it cannot be started (fork failed, or the namespace cannot be
// opened); a failing exec makes the child exit with status 127.
pid_t spawn(const SpawnOptions& options);

// Runs `argv` inside `netns` and waits. Returns its exit status (-1 when it
// was killed by a signal); its output (stdout and stderr) goes to `output`.
int run_in_netns(const std::string& netns, const std::vector<std::string>& argv, std::string& output);

// "signal 9 (Killed)" or "exit status 3" from a waitpid status.
std::string describe_wait_status(int status);

}  // namespace st::emu
