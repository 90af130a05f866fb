#include "core/c10d/gloo_group.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/c10d/gloo_group_state.h"

namespace st::c10d_ddp {
namespace {

// c10::Error::what() appends a C++ backtrace; the short form is what a user
// needs to read next to our own context.
std::string describe(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

std::string where(const GlooGroupOptions& options) {
  return fmt::format("gloo group rank {} of {} (master {}:{}, timeout {} ms)", options.rank, options.world_size,
                     options.master_addr, options.master_port, options.timeout.count());
}

void validate(const GlooGroupOptions& options) {
  auto fail = [&](const std::string& why) { throw GlooGroupError(where(options) + ": " + why); };
  if (options.world_size < 1) fail("world_size must be at least 1");
  if (options.rank < 0 || options.rank >= options.world_size) fail("rank must be in [0, world_size)");
  if (options.master_addr.empty()) fail("master_addr is empty");
  if (options.master_port == 0) fail("master_port must be a fixed port (1-65535), not 0");
  if (options.timeout.count() <= 0) fail("timeout must be positive");
  if (!options.device_interface.empty() && !options.device_hostname.empty())
    fail("set device_interface or device_hostname, not both");
}

bool resolves(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (found != nullptr) freeaddrinfo(found);
  return status == 0;
}

in_addr resolve_ipv4(const GlooGroupOptions& options) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = getaddrinfo(options.master_addr.c_str(), nullptr, &hints, &found);
  if (status != 0 || found == nullptr)
    throw GlooGroupError(fmt::format("{}: cannot resolve master address '{}': {}", where(options), options.master_addr,
                                     gai_strerror(status)));
  const in_addr address = reinterpret_cast<const sockaddr_in*>(found->ai_addr)->sin_addr;
  freeaddrinfo(found);
  return address;
}

std::string to_string(in_addr address) {
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &address, text, sizeof text);
  return text;
}

// connect() on a UDP socket sends nothing; it only asks the kernel for the
// route, and getsockname() then tells which local address that route uses.
std::string local_address_towards(in_addr master, const GlooGroupOptions& options) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) throw GlooGroupError(where(options) + ": socket(): " + std::strerror(errno));
  sockaddr_in remote{};
  remote.sin_family = AF_INET;
  remote.sin_port = htons(options.master_port);
  remote.sin_addr = master;
  sockaddr_in local{};
  socklen_t length = sizeof local;
  const bool routed = connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) == 0 &&
                      getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) == 0;
  const int saved_errno = errno;
  close(fd);
  if (!routed)
    throw GlooGroupError(fmt::format("{}: no route to master address {}: {}", where(options), to_string(master),
                                     std::strerror(saved_errno)));
  return to_string(local.sin_addr);
}

c10::intrusive_ptr<::c10d::Store> connect_store(const GlooGroupOptions& options) {
  ::c10d::TCPStoreOptions store_options;
  store_options.port = options.master_port;
  store_options.isServer = options.rank == 0;
  store_options.numWorkers = static_cast<std::size_t>(options.world_size);
  // TCPStore's own wait for workers gives up silently after the timeout
  // (LibTorch 1.13); wait_for_all_ranks below fails with a clear message.
  store_options.waitWorkers = false;
  store_options.timeout = options.timeout;
  try {
    return c10::make_intrusive<::c10d::TCPStore>(options.master_addr, store_options);
  } catch (const std::exception& error) {
    // TCPStore reports an unresolvable host as a connect timeout; say what it is.
    if (!resolves(options.master_addr))
      throw GlooGroupError(fmt::format("{}: cannot resolve master address '{}'", where(options), options.master_addr));
    const char* action = options.rank == 0 ? "host the TCPStore" : "reach the TCPStore";
    throw GlooGroupError(fmt::format("{}: could not {}: {}", where(options), action, describe(error)));
  }
}

// Every rank checks in under one counter and waits until all have, so a
// missing rank is reported as such rather than as a Gloo socket timeout.
void wait_for_all_ranks(::c10d::Store& store, const GlooGroupOptions& options,
                        std::chrono::steady_clock::time_point deadline) {
  const std::string key = "st_c10d/ranks_joined";
  try {
    int64_t joined = store.add(key, 1);
    while (joined < options.world_size) {
      if (std::chrono::steady_clock::now() > deadline)
        throw GlooGroupError(
            fmt::format("{}: only {} of {} ranks joined in time; is every rank started with the "
                        "same master address, port and world size?",
                        where(options), joined, options.world_size));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      joined = store.add(key, 0);
    }
  } catch (const GlooGroupError&) {
    throw;
  } catch (const std::exception& error) {
    throw GlooGroupError(
        fmt::format("{}: TCPStore failed while waiting for the other ranks: {}", where(options), describe(error)));
  }
}

std::shared_ptr<::gloo::transport::Device> make_device(const GlooGroupOptions& options, std::string& address) {
  try {
    if (!options.device_interface.empty()) {
      address = options.device_interface;
      return ::c10d::ProcessGroupGloo::createDeviceForInterface(options.device_interface);
    }
    address = options.device_hostname.empty() ? default_device_address(options) : options.device_hostname;
    return ::c10d::ProcessGroupGloo::createDeviceForHostname(address);
  } catch (const GlooGroupError&) {
    throw;
  } catch (const std::exception& error) {
    throw GlooGroupError(
        fmt::format("{}: cannot create a Gloo device on {}: {}", where(options), address, describe(error)));
  }
}

}  // namespace

std::string default_device_address(const GlooGroupOptions& options) {
  const in_addr master = resolve_ipv4(options);
  const bool loopback = (ntohl(master.s_addr) >> 24) == 127;
  return loopback ? "127.0.0.1" : local_address_towards(master, options);
}

GlooGroup GlooGroup::connect(const GlooGroupOptions& options) {
  validate(options);
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  auto state = std::make_shared<GlooGroupState>();
  state->options = options;
  state->store = connect_store(options);
  wait_for_all_ranks(*state->store, options, deadline);
  auto gloo_options = ::c10d::ProcessGroupGloo::Options::create(options.timeout);
  gloo_options->devices.push_back(make_device(options, state->device_address));
  try {
    // The constructor runs Gloo's full-mesh rendezvous through the store.
    state->process_group =
        c10::make_intrusive<::c10d::ProcessGroupGloo>(state->store, options.rank, options.world_size, gloo_options);
  } catch (const std::exception& error) {
    throw GlooGroupError(fmt::format("{}: Gloo rendezvous failed (device {}): {}", where(options),
                                     state->device_address, describe(error)));
  }
  return GlooGroup(std::move(state));
}

int GlooGroup::rank() const { return state_->options.rank; }
int GlooGroup::world_size() const { return state_->options.world_size; }
const GlooGroupOptions& GlooGroup::options() const { return state_->options; }
const std::string& GlooGroup::device_address() const { return state_->device_address; }

void GlooGroup::barrier() const {
  try {
    state_->process_group->barrier()->wait();
  } catch (const std::exception& error) {
    throw GlooGroupError(fmt::format("{}: barrier failed: {}", where(state_->options), describe(error)));
  }
}

}  // namespace st::c10d_ddp
