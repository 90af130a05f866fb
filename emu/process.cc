#include "emu/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "emu/netns.h"

extern char** environ;

namespace st::emu {

pid_t spawn(const SpawnOptions& options) {
  if (options.argv.empty()) throw EmuError("spawn: no program given");
  // Everything the child needs is prepared before fork.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& extra : options.env) {
    const std::string name = extra.substr(0, extra.find('=') + 1);
    env_strings.erase(std::remove_if(env_strings.begin(), env_strings.end(),
                                     [&](const std::string& s) { return s.compare(0, name.size(), name) == 0; }),
                      env_strings.end());
    env_strings.push_back(extra);
  }
  std::vector<char*> argv, envp;
  for (const auto& a : options.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  UniqueFd netns;
  if (!options.netns.empty()) netns = open_netns(options.netns);
  const std::string output = options.output_path.empty() ? "/dev/null" : options.output_path;
  UniqueFd out(open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!out) throw EmuError(fmt::format("cannot open {} for {}'s output: {}", output, options.argv[0], std::strerror(errno)));
  const pid_t parent = getpid();

  const pid_t pid = fork();
  if (pid < 0) throw EmuError(fmt::format("fork for {}: {}", options.argv[0], std::strerror(errno)));
  if (pid == 0) {
    // Child: async-signal-safe calls only.
    if (options.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(126);  // the parent is already gone
    }
    if (options.new_session) setsid();
    else if (options.new_process_group) setpgid(0, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the launcher blocks signals; the child must not inherit that
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    if (netns && setns(netns.get(), CLONE_NEWNET) != 0) _exit(125);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    dup2(out.get(), STDOUT_FILENO);
    dup2(out.get(), STDERR_FILENO);
    // No inherited descriptor (netlink sockets into the routers, the
    // NFQUEUE sockets) may keep a namespace alive or reach the program.
    close_range(3, ~0U, 0);
    if (options.argv[0].find('/') != std::string::npos) execve(argv[0], argv.data(), envp.data());
    else execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

int run_in_netns(const std::string& netns, const std::vector<std::string>& argv, std::string& output) {
  char path[] = "/tmp/stellatrain-emu-command-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw EmuError(fmt::format("mkstemp: {}", std::strerror(errno)));
  close(fd);
  SpawnOptions options;
  options.netns = netns;
  options.argv = argv;
  options.output_path = path;
  int status = 0;
  try {
    const pid_t pid = spawn(options);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  } catch (...) {
    unlink(path);
    throw;
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  output = text.str();
  unlink(path);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return -1;
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("wait status {}", status);
}

}  // namespace st::emu
