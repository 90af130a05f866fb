#pragma once
// The per-rank side of a simulated transport, shared by the ns-3 fabric
// (sim/ns3_fabric.h) and the flow-level one (sim/flow/flow_fabric.h):
// handlers, statistics, close state, which peers were already reported,
// and what a deferred delivery or report does when its event runs. Each
// fabric schedules those events itself (the ns-3 one now, the flow one at a
// message's arrival time); this class decides what they do. Internal to
// sim/; no ns-3 header here.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/comm/transport.h"

namespace st::sim {

// The message a receiver gets; wire_bytes only where the payload stood for
// more (comm::Transport::send_standing_for).
comm::Message message_of(comm::Rank source, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes);

class FabricEndpoints {
 public:
  // `transport`: how errors name it ("ns-3 transport", "flow transport").
  FabricEndpoints(int world, std::string transport);

  int world_size() const { return static_cast<int>(endpoints_.size()); }
  // std::invalid_argument for a rank outside the world (a caller bug).
  void check_rank(comm::Rank rank, const char* what) const;

  void set_receive_handler(comm::Rank rank, comm::ReceiveHandler handler);
  void set_error_handler(comm::Rank rank, comm::ErrorHandler handler);
  comm::TransportStats stats(comm::Rank rank) const;
  uint64_t dropped_messages(comm::Rank rank) const;

  bool closed(comm::Rank rank) const { return endpoints_[static_cast<std::size_t>(rank)].closed; }
  // Marks `rank` closed; false when it already was.
  bool close(comm::Rank rank);
  // A send of `rank` completed without error (its wire bytes: the payload's,
  // or what a sample stood for).
  void count_sent(comm::Rank rank, uint64_t wire_bytes);
  // True, once per (rank, peer), when `rank` is open and should be told of
  // a failure involving `peer`.
  bool first_report(comm::Rank rank, comm::Rank peer);

  // What a deferred event does: hand `message` to `to`'s receive handler;
  // nothing for a closed rank; counted as dropped without a handler.
  void deliver(comm::Rank to, comm::Message&& message);
  // What a deferred report does: the error handler, while `rank` is open.
  void report(comm::Rank rank, comm::Rank peer, const std::string& what);

  // "<transport>: rank N is closed" / "<transport>: rank N left (closed)".
  std::string is_closed_message(comm::Rank rank) const;
  std::string left_message(comm::Rank rank) const;

 private:
  struct Endpoint {
    comm::ReceiveHandler receive;
    comm::ErrorHandler error;
    comm::TransportStats stats;
    bool closed = false;
    std::set<comm::Rank> reported;  // peers already reported to the error handler
    uint64_t dropped = 0;
  };

  std::string transport_;
  std::vector<Endpoint> endpoints_;
};

}  // namespace st::sim
