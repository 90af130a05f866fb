#include "emu/netns.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace st::emu {
namespace {

std::string path_of(const std::string& name) { return std::string(kNetnsDir) + "/" + name; }

[[noreturn]] void fail_errno(const std::string& what) {
  throw EmuError(fmt::format("{}: {}", what, std::strerror(errno)));
}

void check_name(const std::string& name) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    throw EmuError(fmt::format("network namespace name '{}' is not a plain file name", name));
}

UniqueFd current_netns() {
  UniqueFd fd(open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  if (!fd) fail_errno("open /proc/thread-self/ns/net");
  return fd;
}

// /run/netns must exist and be a shared mount, as iproute2 sets it up, so
// that the namespaces' bind mounts are seen by `ip netns exec`.
void prepare_netns_dir() {
  if (mkdir(kNetnsDir, 0755) != 0 && errno != EEXIST) fail_errno(fmt::format("mkdir {}", kNetnsDir));
  if (mount("", kNetnsDir, "none", MS_SHARED | MS_REC, nullptr) == 0) return;
  if (errno != EINVAL) fail_errno(fmt::format("make {} a shared mount", kNetnsDir));
  // Not a mount point yet: bind it onto itself first (iproute2 does the same).
  if (mount(kNetnsDir, kNetnsDir, "none", MS_BIND | MS_REC, nullptr) != 0)
    fail_errno(fmt::format("bind-mount {} onto itself", kNetnsDir));
  if (mount("", kNetnsDir, "none", MS_SHARED | MS_REC, nullptr) != 0)
    fail_errno(fmt::format("make {} a shared mount", kNetnsDir));
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

void create_netns(const std::string& name) {
  check_name(name);
  prepare_netns_dir();
  const std::string path = path_of(name);
  {
    UniqueFd placeholder(open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0));
    if (!placeholder) fail_errno(fmt::format("create {}", path));
  }
  // A new namespace for this thread only, bind-mounted onto the file, then
  // the thread goes back where it was.
  UniqueFd previous = current_netns();
  if (unshare(CLONE_NEWNET) != 0) {
    const int saved = errno;
    unlink(path.c_str());
    errno = saved;
    fail_errno(fmt::format("unshare a network namespace for {}", name));
  }
  const bool mounted = mount("/proc/thread-self/ns/net", path.c_str(), "none", MS_BIND, nullptr) == 0;
  const int mount_errno = errno;
  if (setns(previous.get(), CLONE_NEWNET) != 0) fail_errno("return to the previous network namespace");
  if (!mounted) {
    unlink(path.c_str());
    errno = mount_errno;
    fail_errno(fmt::format("bind-mount the namespace onto {}", path));
  }
}

bool delete_netns(const std::string& name) {
  check_name(name);
  const std::string path = path_of(name);
  if (access(path.c_str(), F_OK) != 0) return false;
  if (umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT)
    fail_errno(fmt::format("unmount {}", path));
  if (unlink(path.c_str()) != 0 && errno != ENOENT) fail_errno(fmt::format("remove {}", path));
  return true;
}

bool netns_exists(const std::string& name) { return access(path_of(name).c_str(), F_OK) == 0; }

std::vector<std::string> list_netns() {
  std::vector<std::string> names;
  DIR* dir = opendir(kNetnsDir);
  if (dir == nullptr) return names;
  while (const dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

UniqueFd open_netns(const std::string& name) {
  check_name(name);
  UniqueFd fd(open(path_of(name).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) fail_errno(fmt::format("open network namespace {}", path_of(name)));
  return fd;
}

ino_t netns_inode(const std::string& name) {
  struct stat info {};
  if (stat(path_of(name).c_str(), &info) != 0) return 0;
  return info.st_ino;
}

NetnsScope::NetnsScope(const std::string& name) : previous_(current_netns()) {
  const UniqueFd target = open_netns(name);
  if (setns(target.get(), CLONE_NEWNET) != 0) fail_errno(fmt::format("enter network namespace {}", name));
}

NetnsScope::~NetnsScope() {
  // Nothing sensible remains if this fails: the thread would stay elsewhere.
  if (setns(previous_.get(), CLONE_NEWNET) != 0) std::abort();
}

std::vector<pid_t> processes_in_netns(ino_t inode) {
  std::vector<pid_t> found;
  if (inode == 0) return found;
  const std::string wanted = fmt::format("net:[{}]", inode);
  auto points_to = [&](const std::string& link) {
    char target[64] = {};
    const ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
    return length > 0 && wanted == std::string(target, static_cast<std::size_t>(length));
  };
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    // Any thread of the process may be the one inside (setns is per thread).
    const std::string tasks = fmt::format("/proc/{}/task", pid);
    DIR* dir = opendir(tasks.c_str());
    if (dir == nullptr) continue;
    bool inside = false;
    while (const dirent* task = readdir(dir)) {
      if (task->d_name[0] == '.') continue;
      if (points_to(fmt::format("{}/{}/ns/net", tasks, task->d_name))) inside = true;
    }
    closedir(dir);
    if (inside) found.push_back(static_cast<pid_t>(pid));
  }
  closedir(proc);
  return found;
}

void write_sysctl(const std::string& netns, const std::string& key, const std::string& value) {
  NetnsScope scope(netns);
  const std::string path = "/proc/sys/net/" + key;
  std::ofstream out(path);
  out << value << "\n";
  out.close();
  if (!out) throw EmuError(fmt::format("{}: cannot write {} = {}", netns, path, value));
}

std::string read_sysctl(const std::string& netns, const std::string& key) {
  NetnsScope scope(netns);
  const std::string path = "/proc/sys/net/" + key;
  std::ifstream in(path);
  if (!in) throw EmuError(fmt::format("{}: cannot read {}", netns, path));
  std::stringstream text;
  text << in.rdbuf();
  std::string value = text.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.pop_back();
  return value;
}

}  // namespace st::emu
