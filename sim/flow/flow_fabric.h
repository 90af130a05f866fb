#pragma once
// The Transport of the flow-level network (internal to sim/flow/): one
// endpoint per engine node, one persistent connection of the FlowModel per
// ordered node pair, opened when the network is built. Its semantics are
// the ns-3 Transport's, word for word (sim/ns3_transport.h): each message
// is a 12-byte frame header plus its payload of stream bytes; on_done(nullptr)
// once the message fits in the sender's socket buffer; delivery when its last
// byte has arrived; every user callback deferred to its own simulator event;
// a closed rank fails the sends not yet handed over and receives nothing
// more. Connections never fail in this model (no RST, no refused connect).
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/comm/transport.h"
#include "net/schedule_walker.h"
#include "sim/fabric_endpoints.h"
#include "sim/flow/flow_model.h"

namespace st::sim::flow {

class FlowFabric : public std::enable_shared_from_this<FlowFabric> {
 public:
  static constexpr uint64_t kFrameHeaderBytes = 12;  // as the ns-3 fabric's: tag (4) + length (8)

  // `connection_of(from, to)`: the model's connection for each ordered pair
  // (from * world + to; -1 on the diagonal). The clock schedules on the
  // simulator; model and clock outlive the fabric's events (detach()).
  FlowFabric(FlowModel& model, net::ReplayClock& clock, int world, std::vector<int> connection_of);

  int world_size() const { return endpoints_.world_size(); }
  void set_receive_handler(comm::Rank rank, comm::ReceiveHandler handler);
  void set_error_handler(comm::Rank rank, comm::ErrorHandler handler);
  // `wire_bytes`: what the message takes on the wire (its payload's size,
  // or more for a sample: comm::Transport::send_standing_for).
  void send(comm::Rank from, comm::Rank to, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
            comm::SendCallback on_done);
  comm::TransportStats stats(comm::Rank rank) const;
  void close(comm::Rank rank);

  // Runs the model up to now and hands its milestones out; then waits for
  // its next event. Called after anything changed the model (a trace step).
  void pump();
  // No more events into this object (owner's destructor).
  void detach();

 private:
  struct InFlight {
    comm::Rank from = 0, to = 0;
    std::shared_ptr<comm::Message> message;
    comm::SendCallback on_done;
    uint64_t wire_bytes = 0;
    bool handed = false;
    bool failed = false;
  };
  void on_milestone(const FlowModel::Milestone& milestone);
  void wake_at(double at_s);
  void fail(uint64_t id, comm::Rank blamed, const std::string& why, bool report);

  void complete_later(comm::Rank rank, comm::SendCallback on_done, std::exception_ptr error, uint64_t wire_bytes);
  void deliver_later(comm::Rank to, std::shared_ptr<comm::Message> message, double at_s);
  void report_later(comm::Rank rank, comm::Rank peer, const std::string& what);

  FlowModel& model_;
  net::ReplayClock& clock_;
  const std::vector<int> connection_of_;
  FabricEndpoints endpoints_;
  std::map<uint64_t, InFlight> in_flight_;  // by message id, in send order
  uint64_t next_id_ = 0;
  bool wake_pending_ = false;
  double wake_s_ = 0;
  uint64_t wake_handle_ = 0;
  bool detached_ = false;
};

// The comm::Transport of one node.
class FlowTransport final : public comm::Transport {
 public:
  FlowTransport(std::shared_ptr<FlowFabric> fabric, comm::Rank rank) : fabric_(std::move(fabric)), rank_(rank) {}

  comm::Rank rank() const override { return rank_; }
  int world_size() const override { return fabric_->world_size(); }
  void on_receive(comm::ReceiveHandler handler) override { fabric_->set_receive_handler(rank_, std::move(handler)); }
  void on_error(comm::ErrorHandler handler) override { fabric_->set_error_handler(rank_, std::move(handler)); }
  void send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, comm::SendCallback on_done) override {
    const uint64_t wire_bytes = payload.size();
    fabric_->send(rank_, destination, tag, std::move(payload), wire_bytes, std::move(on_done));
  }
  void send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                         comm::SendCallback on_done) override {
    fabric_->send(rank_, destination, tag, std::move(payload), wire_bytes, std::move(on_done));
  }
  comm::TransportStats stats() const override { return fabric_->stats(rank_); }
  void close() override { fabric_->close(rank_); }

 private:
  std::shared_ptr<FlowFabric> fabric_;
  const comm::Rank rank_;
};

}  // namespace st::sim::flow
