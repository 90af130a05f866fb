#pragma once
// Named network namespaces, kept the way iproute2 keeps them (a bind mount
// of the namespace at /run/netns/NAME), so that `ip netns exec NAME ...`
// works on what the emulator builds. Written with the system calls
// (unshare, mount, setns) instead of running `ip netns`: the product path
// never shells out to ip or tc.
//
// A thread enters a namespace with NetnsScope; sockets opened there stay in
// that namespace after the thread leaves it (netlink, NFQUEUE, packet
// sockets), which is how one process drives every router of a run.
#include <sys/types.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace st::emu {

inline constexpr const char* kNetnsDir = "/run/netns";

// Anything the emulator could not do, with what and where.
class EmuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A file descriptor closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  int release();
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Creates /run/netns/NAME holding a fresh network namespace (as `ip netns
// add`). Throws EmuError naming NAME and the failing call.
void create_netns(const std::string& name);
// Unmounts and removes /run/netns/NAME. Returns false when it did not
// exist. The namespace itself goes away once no process, thread or socket
// holds it any more.
bool delete_netns(const std::string& name);
bool netns_exists(const std::string& name);
// The names in /run/netns (empty when the folder does not exist).
std::vector<std::string> list_netns();
UniqueFd open_netns(const std::string& name);
// The namespace's identity (the nsfs inode behind /run/netns/NAME); 0 when absent.
ino_t netns_inode(const std::string& name);

// Enters a named namespace in the calling thread; the destructor returns
// the thread to the namespace it was in.
class NetnsScope {
 public:
  explicit NetnsScope(const std::string& name);
  ~NetnsScope();
  NetnsScope(const NetnsScope&) = delete;
  NetnsScope& operator=(const NetnsScope&) = delete;

 private:
  UniqueFd previous_;
};

// Processes (thread-group leaders) and threads whose network namespace has
// inode `inode`: what still holds a namespace alive.
std::vector<pid_t> processes_in_netns(ino_t inode);

// /proc/sys/net/... of the namespace: `key` like "ipv4/ip_forward".
void write_sysctl(const std::string& netns, const std::string& key, const std::string& value);
std::string read_sysctl(const std::string& netns, const std::string& key);

}  // namespace st::emu
