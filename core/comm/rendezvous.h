#pragma once
// A ready TCP transport, torchrun style: every rank knows RANK, WORLD_SIZE,
// MASTER_ADDR and MASTER_PORT; rank 0 hosts a c10d TCPStore there; every
// rank listens on an OS-chosen port, publishes "host:port" under its rank's
// key, reads everybody else's and connects (see tcp_transport.h for the
// connection scheme, docs/transport.md for the whole story).
//
// LibTorch stays out of this header: only rendezvous.cc includes the store.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/comm/tcp_transport.h"
#include "core/comm/transport.h"

namespace st::comm {

struct TcpOptions {
  Rank rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  uint16_t master_port = 29500;  // 0 (rank 0 only): the OS picks; see on_store_listening
  // How peers reach this rank. Empty: listen_host when it is a specific
  // address, else the local address on the route to master_addr.
  std::string advertise_host;
  std::string listen_host = "0.0.0.0";
  // Bounds everything make_tcp_transport() waits for: reaching the store,
  // every rank's address, every connection.
  std::chrono::milliseconds connect_timeout{60000};
  std::chrono::milliseconds heartbeat_interval{1000};
  std::chrono::milliseconds peer_timeout{30000};
  std::chrono::milliseconds close_timeout{2000};
  uint64_t max_message_bytes = uint64_t{1} << 30;
  int socket_buffer_bytes = 0;  // 0: Linux autotuning (fastest on loopback; see docs)
  std::string key_prefix = "st/tcp/";
  // Rank 0: called with the store's port once it listens (tests pass
  // master_port 0 and hand the port to the other ranks).
  std::function<void(uint16_t port)> on_store_listening;
};

// Fills the options from RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
// (required) and, when set, ST_CONNECT_TIMEOUT_MS, ST_PEER_TIMEOUT_MS,
// ST_HEARTBEAT_MS, ST_MAX_MESSAGE_BYTES, ST_ADVERTISE_ADDR. Throws
// std::invalid_argument naming the variable that is missing or malformed.
// `lookup` stands in for std::getenv (tests); empty means std::getenv.
using EnvLookup = std::function<const char*(const char* name)>;
TcpOptions tcp_options_from_env(const EnvLookup& lookup = nullptr);

// The transport settings that follow from the options.
TcpTransportConfig transport_config(const TcpOptions& options, uint64_t session_id);

// Rendezvous plus connections; returns a transport connected to every peer.
// Blocks up to connect_timeout; throws TransportError naming the rank that
// did not show up (peer() is that rank; 0 when the store cannot be reached),
// std::invalid_argument for inconsistent options.
std::unique_ptr<Transport> make_tcp_transport(const TcpOptions& options);

}  // namespace st::comm
