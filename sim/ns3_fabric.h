#pragma once
// The connections behind every Ns3Transport of one SimNetwork (internal to
// sim/; see ns3_transport.h for the semantics). One TCP socket per ordered
// pair (from -> to): `from` connects to `to`'s listening socket, data flows
// only that way, and `to` counts the bytes of the accepted socket to find
// message boundaries in the pair's FIFO of messages kept aside.
#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/comm/transport.h"
#include "sim/fabric_endpoints.h"
#include "sim/sim_plan.h"

namespace st::sim {

struct FabricNode {
  ns3::Ptr<ns3::Node> node;
  ns3::Ipv4Address address;
};

struct FabricConfig {
  std::vector<FabricNode> nodes;
  // Congestion control TypeId name per ordered pair, from * world + to.
  std::vector<std::string> tcp_type_names;
  uint32_t segment_bytes = 1448;
  uint32_t socket_buffer_bytes = 64u << 20;
  Ns3TcpTimers timers;  // every socket's MinRto, ClockGranularity and DelAckTimeout
  uint16_t port = 7000;
};

class Ns3Fabric : public std::enable_shared_from_this<Ns3Fabric> {
 public:
  static constexpr uint64_t kFrameHeaderBytes = 12;  // tag (4) + length (8)

  explicit Ns3Fabric(FabricConfig config);
  // Listens on every node and connects every ordered pair of distinct nodes
  // (the handshakes run in simulated time from now).
  void start();
  // Clears every socket callback into this object (owner's destructor).
  void detach();

  int world_size() const { return static_cast<int>(config_.nodes.size()); }
  void set_receive_handler(comm::Rank rank, comm::ReceiveHandler handler);
  void set_error_handler(comm::Rank rank, comm::ErrorHandler handler);
  // `wire_bytes`: what the message takes on the wire (its payload's size,
  // or more for a sample: comm::Transport::send_standing_for).
  void send(comm::Rank from, comm::Rank to, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
            comm::SendCallback on_done);
  comm::TransportStats stats(comm::Rank rank) const;
  void close(comm::Rank rank);
  uint64_t stream_bytes(comm::Rank from, comm::Rank to) const;
  uint64_t dropped_messages(comm::Rank rank) const;

 private:
  struct Outgoing {  // sender side: a message not yet fully handed to TCP
    uint64_t stream_bytes = 0;
    uint64_t handed = 0;
    uint64_t payload_bytes = 0;
    comm::SendCallback on_done;
  };
  struct Arriving {  // receiver side: a payload waiting for its last byte
    uint64_t stream_end = 0;  // the pair's stream offset just past this message
    std::shared_ptr<comm::Message> message;
  };
  struct Pair {
    ns3::Ptr<ns3::Socket> socket;   // on `from`, connected to `to`
    ns3::Ptr<ns3::Socket> receiver; // accepted on `to`
    bool connected = false;
    bool failed = false;
    std::deque<Outgoing> outgoing;
    std::deque<Arriving> arriving;
    uint64_t stream_queued = 0;    // stream bytes of every message accepted by send()
    uint64_t stream_received = 0;  // in-order bytes read at `to`
  };
  Pair& pair(comm::Rank from, comm::Rank to) { return pairs_[static_cast<std::size_t>(from) * world_size() + to]; }
  const Pair& pair(comm::Rank from, comm::Rank to) const {
    return pairs_[static_cast<std::size_t>(from) * world_size() + to];
  }
  void check_rank(comm::Rank rank, const char* what) const { endpoints_.check_rank(rank, what); }
  void configure_socket(ns3::Ptr<ns3::Socket> socket, const std::string& tcp_type_name) const;
  void listen(comm::Rank rank);
  void connect(comm::Rank from, comm::Rank to);
  void accept(comm::Rank to, ns3::Ptr<ns3::Socket> socket, const ns3::Address& peer);
  void pump(comm::Rank from, comm::Rank to);
  void read(comm::Rank from, comm::Rank to, ns3::Ptr<ns3::Socket> socket);
  void connection_failed(comm::Rank from, comm::Rank to, const std::string& why);
  void send_to_self(comm::Rank rank, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                    comm::SendCallback on_done);
  void fail_outgoing(comm::Rank from, comm::Rank to, comm::Rank blamed, const std::string& why, bool report);

  // Deferred calls into user code (never inline, see ns3_transport.h).
  void complete_later(comm::Rank rank, comm::SendCallback on_done, std::exception_ptr error, uint64_t payload_bytes);
  void deliver_later(comm::Rank to, std::shared_ptr<comm::Message> message);
  void report_later(comm::Rank rank, comm::Rank peer, const std::string& what);

  FabricConfig config_;
  std::vector<Pair> pairs_;
  FabricEndpoints endpoints_;
  std::vector<ns3::Ptr<ns3::Socket>> listeners_;  // per rank
};

}  // namespace st::sim
