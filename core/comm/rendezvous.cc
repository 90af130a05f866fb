#include "core/comm/rendezvous.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include <asio.hpp>
#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace st::comm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

milliseconds remaining(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
  return std::max(left, milliseconds(1));
}

// --- environment -----------------------------------------------------------------

const char* lookup_variable(const EnvLookup& lookup, const char* name) {
  const char* value = lookup ? lookup(name) : std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

const char* required_variable(const EnvLookup& lookup, const char* name) {
  const char* value = lookup_variable(lookup, name);
  if (value == nullptr) {
    throw std::invalid_argument(fmt::format(
        "environment variable {} is not set (rendezvous needs RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)", name));
  }
  return value;
}

long long parse_integer(const char* name, const char* text, long long min, long long max) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min || value > max) {
    throw std::invalid_argument(
        fmt::format("environment variable {}='{}' is not an integer in [{}, {}]", name, text, min, max));
  }
  return value;
}

void read_optional_ms(const EnvLookup& lookup, const char* name, milliseconds& target) {
  if (const char* text = lookup_variable(lookup, name)) target = milliseconds(parse_integer(name, text, 1, 86400000));
}

// --- the store ---------------------------------------------------------------------

std::string key(const TcpOptions& options, const std::string& name) { return options.key_prefix + name; }
std::string address_key(const TcpOptions& options, Rank rank) { return key(options, fmt::format("addr/{}", rank)); }

std::unique_ptr<c10d::TCPStore> host_store(const TcpOptions& options, Clock::time_point deadline) {
  c10d::TCPStoreOptions store_options;
  store_options.port = options.master_port;
  store_options.isServer = true;
  store_options.waitWorkers = false;
  store_options.timeout = remaining(deadline);
  std::unique_ptr<c10d::TCPStore> store;
  try {
    store = std::make_unique<c10d::TCPStore>(options.master_addr, store_options);
  } catch (const std::exception& error) {
    throw TransportError(-1, fmt::format("rank 0: cannot host the TCPStore on {}:{}: {}", options.master_addr,
                                         options.master_port, error.what()));
  }
  if (options.on_store_listening) options.on_store_listening(store->getPort());
  return store;
}

// Rank 0 may start later than the others: retry until the deadline.
std::unique_ptr<c10d::TCPStore> join_store(const TcpOptions& options, Clock::time_point deadline) {
  std::string last_error = "no attempt";
  while (Clock::now() < deadline) {
    c10d::TCPStoreOptions store_options;
    store_options.port = options.master_port;
    store_options.isServer = false;
    store_options.waitWorkers = false;
    store_options.timeout = remaining(deadline);
    try {
      return std::make_unique<c10d::TCPStore>(options.master_addr, store_options);
    } catch (const std::exception& error) {
      last_error = error.what();
    }
    std::this_thread::sleep_for(std::min(milliseconds(100), remaining(deadline)));
  }
  throw TransportError(0, fmt::format("rank {}: rendezvous: no TCPStore of rank 0 at {}:{} within {} ms: {}",
                                      options.rank, options.master_addr, options.master_port,
                                      options.connect_timeout.count(), last_error));
}

// Waits (polling; a timed-out c10d wait leaves its socket out of step) until
// every key exists. Throws naming the ranks whose keys are missing.
void wait_for_keys(c10d::Store& store, std::vector<std::pair<Rank, std::string>> keys, const TcpOptions& options,
                   Clock::time_point deadline, const char* what) {
  for (;;) {
    try {
      keys.erase(std::remove_if(keys.begin(), keys.end(), [&](const auto& entry) { return store.check({entry.second}); }),
                 keys.end());
    } catch (const std::exception& error) {
      throw TransportError(0, fmt::format("rank {}: rendezvous: lost the TCPStore at {}:{}: {}", options.rank,
                                          options.master_addr, options.master_port, error.what()));
    }
    if (keys.empty()) return;
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::min(milliseconds(10), remaining(deadline)));
  }
  std::string ranks;
  for (const auto& entry : keys) ranks += (ranks.empty() ? "" : ", ") + std::to_string(entry.first);
  throw TransportError(keys.front().first,
                       fmt::format("rank {}: rendezvous timed out after {} ms: rank(s) {} did not publish {} to "
                                   "the TCPStore at {}:{}",
                                   options.rank, options.connect_timeout.count(), ranks, what, options.master_addr,
                                   options.master_port));
}

std::string read_string(c10d::Store& store, const std::string& name) {
  const std::vector<uint8_t> bytes = store.get(name);
  return std::string(bytes.begin(), bytes.end());
}

// Rank 0 draws the job's session id; the hello carries it, so a process
// left over from another run cannot join this one.
uint64_t agree_on_session(c10d::Store& store, const TcpOptions& options, Clock::time_point deadline) {
  const std::string session_key = key(options, "session");
  if (options.rank == 0) {
    std::random_device entropy;
    const uint64_t session = (uint64_t{entropy()} << 32) ^ entropy() ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    const std::string text = std::to_string(session);
    store.set(session_key, std::vector<uint8_t>(text.begin(), text.end()));
    return session;
  }
  wait_for_keys(store, {{0, session_key}}, options, deadline, "the session id");
  return std::stoull(read_string(store, session_key));
}

// --- addresses -----------------------------------------------------------------------

bool is_wildcard(const std::string& host) { return host.empty() || host == "0.0.0.0" || host == "::"; }

// The local address on the route to the master: what the other ranks, which
// reach the master too, can most likely reach. A UDP connect sends nothing.
std::string route_address_to(const std::string& master_addr, uint16_t master_port) {
  asio::io_context io;
  std::error_code error;
  asio::ip::udp::resolver resolver(io);
  const auto results = resolver.resolve(master_addr, std::to_string(master_port), error);
  if (error || results.empty()) return "127.0.0.1";
  asio::ip::udp::socket socket(io);
  socket.connect(results.begin()->endpoint(), error);
  if (error) return "127.0.0.1";
  return socket.local_endpoint(error).address().to_string();
}

std::string advertised_host(const TcpOptions& options) {
  if (!options.advertise_host.empty()) return options.advertise_host;
  if (!is_wildcard(options.listen_host)) return options.listen_host;
  return route_address_to(options.master_addr, options.master_port);
}

std::vector<PeerAddress> exchange_addresses(c10d::Store& store, const TcpOptions& options, const PeerAddress& self,
                                            Clock::time_point deadline) {
  const std::string text = self.to_string();
  store.set(address_key(options, options.rank), std::vector<uint8_t>(text.begin(), text.end()));
  std::vector<std::pair<Rank, std::string>> keys;
  for (Rank peer = 0; peer < options.world_size; ++peer) keys.emplace_back(peer, address_key(options, peer));
  wait_for_keys(store, keys, options, deadline, "their address");
  std::vector<PeerAddress> peers;
  for (Rank peer = 0; peer < options.world_size; ++peer) {
    const std::string published = read_string(store, address_key(options, peer));
    try {
      peers.push_back(parse_peer_address(published));
    } catch (const std::invalid_argument& error) {
      throw TransportError(peer, fmt::format("rank {} published a bad address: {}", peer, error.what()));
    }
  }
  return peers;
}

void validate(const TcpOptions& options) {
  if (options.world_size < 1) throw std::invalid_argument(fmt::format("world_size {} < 1", options.world_size));
  if (options.rank < 0 || options.rank >= options.world_size) {
    throw std::invalid_argument(fmt::format("rank {} outside [0, {})", options.rank, options.world_size));
  }
  if (options.master_port == 0 && options.rank != 0) {
    throw std::invalid_argument("master_port 0 (OS-chosen) only makes sense for rank 0, which hosts the store");
  }
}

}  // namespace

TcpOptions tcp_options_from_env(const EnvLookup& lookup) {
  TcpOptions options;
  options.world_size = static_cast<int>(parse_integer("WORLD_SIZE", required_variable(lookup, "WORLD_SIZE"), 1, 1 << 20));
  options.rank = static_cast<Rank>(parse_integer("RANK", required_variable(lookup, "RANK"), 0, options.world_size - 1));
  options.master_addr = required_variable(lookup, "MASTER_ADDR");
  options.master_port = static_cast<uint16_t>(parse_integer("MASTER_PORT", required_variable(lookup, "MASTER_PORT"), 1, 65535));
  read_optional_ms(lookup, "ST_CONNECT_TIMEOUT_MS", options.connect_timeout);
  read_optional_ms(lookup, "ST_PEER_TIMEOUT_MS", options.peer_timeout);
  read_optional_ms(lookup, "ST_HEARTBEAT_MS", options.heartbeat_interval);
  if (const char* text = lookup_variable(lookup, "ST_MAX_MESSAGE_BYTES")) {
    options.max_message_bytes = static_cast<uint64_t>(parse_integer("ST_MAX_MESSAGE_BYTES", text, 1, 1LL << 40));
  }
  if (const char* text = lookup_variable(lookup, "ST_ADVERTISE_ADDR")) options.advertise_host = text;
  return options;
}

TcpTransportConfig transport_config(const TcpOptions& options, uint64_t session_id) {
  TcpTransportConfig config;
  config.rank = options.rank;
  config.world_size = options.world_size;
  config.session_id = session_id;
  config.listen_host = options.listen_host;
  config.max_message_bytes = options.max_message_bytes;
  config.heartbeat_interval = options.heartbeat_interval;
  config.peer_timeout = options.peer_timeout;
  config.handshake_timeout = options.connect_timeout;
  config.close_timeout = options.close_timeout;
  config.socket_buffer_bytes = options.socket_buffer_bytes;
  return config;
}

std::unique_ptr<Transport> make_tcp_transport(const TcpOptions& options) {
  validate(options);
  if (options.world_size == 1) return std::make_unique<TcpTransport>(transport_config(options, 0));
  const Clock::time_point deadline = Clock::now() + options.connect_timeout;
  // Rank 0's store must outlive the others' reads: it does, because they
  // read every address before dialling, and rank 0's connect() waits for
  // all of them to dial in.
  const std::unique_ptr<c10d::TCPStore> store =
      options.rank == 0 ? host_store(options, deadline) : join_store(options, deadline);
  const uint64_t session = agree_on_session(*store, options, deadline);
  auto transport = std::make_unique<TcpTransport>(transport_config(options, session));
  const PeerAddress self{advertised_host(options), transport->listen_port()};
  const std::vector<PeerAddress> peers = exchange_addresses(*store, options, self, deadline);
  transport->connect(peers, remaining(deadline));
  return transport;
}

}  // namespace st::comm
