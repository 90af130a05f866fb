#pragma once
// A c10d::ProcessGroupGloo for one rank, set up the way torch.distributed's
// env:// init does it: rank 0 hosts a c10d::TCPStore at master_addr:port,
// every rank (rank 0 included) connects to it as a client, and Gloo's
// rendezvous runs over that store. This header is torch-free; code that needs
// the c10d objects themselves includes core/c10d/gloo_group_state.h.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace st::c10d_ddp {

struct GlooGroupOptions {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";  // host name or IPv4 address of rank 0
  uint16_t master_port = 29500;
  // Bounds store connection, rendezvous and every collective.
  std::chrono::milliseconds timeout{30000};
  // Where this rank's Gloo device binds; set at most one of the two. Both
  // empty: "127.0.0.1" when master_addr resolves to a loopback address,
  // otherwise the local address the kernel routes towards master_addr.
  std::string device_interface;  // e.g. "eth0", "lo"
  std::string device_hostname;   // a local host name or address, e.g. "10.0.0.2"
};

// Set-up failures (bad options, unreachable master, rendezvous timeout). The
// message names the rank, the master address and port, and the timeout.
class GlooGroupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GlooGroupState;  // the c10d objects (core/c10d/gloo_group_state.h)

// A handle to one rank's process group; copies share it. Destroying the last
// copy shuts the group down (pending collectives are finished first).
class GlooGroup {
 public:
  // Blocks until all world_size ranks have joined or options.timeout passes.
  // Throws GlooGroupError.
  static GlooGroup connect(const GlooGroupOptions& options);

  int rank() const;
  int world_size() const;
  const GlooGroupOptions& options() const;
  // Where the Gloo device bound: device_interface when set, otherwise the
  // host name or address (device_hostname or the resolved default).
  const std::string& device_address() const;

  // A Gloo barrier over all ranks.
  void barrier() const;

  const std::shared_ptr<GlooGroupState>& state() const { return state_; }

 private:
  explicit GlooGroup(std::shared_ptr<GlooGroupState> state) : state_(std::move(state)) {}
  std::shared_ptr<GlooGroupState> state_;
};

// The IPv4 address a Gloo device should bind to for `options` when neither
// device_interface nor device_hostname is set (see GlooGroupOptions).
// Throws GlooGroupError when master_addr does not resolve.
std::string default_device_address(const GlooGroupOptions& options);

}  // namespace st::c10d_ddp
