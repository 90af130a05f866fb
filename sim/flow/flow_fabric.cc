#include "sim/flow/flow_fabric.h"

#include <fmt/format.h>

#include <stdexcept>

namespace st::sim::flow {
namespace {

using comm::Rank;
using comm::TransportError;

// The simulator keeps time in nanoseconds: an event the model wants at t
// fires at t rounded, a hair early. Anything due within this is due now.
constexpr double kClockGrain = 1e-9;

}  // namespace

FlowFabric::FlowFabric(FlowModel& model, net::ReplayClock& clock, int world, std::vector<int> connection_of)
    : model_(model), clock_(clock), connection_of_(std::move(connection_of)), endpoints_(world, "flow transport") {
  if (connection_of_.size() != static_cast<std::size_t>(world) * world)
    throw std::invalid_argument("flow fabric: one connection per ordered pair of nodes");
}

void FlowFabric::send(Rank from, Rank to, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                      comm::SendCallback on_done) {
  endpoints_.check_rank(from, "source rank");
  endpoints_.check_rank(to, "destination rank");
  auto message = std::make_shared<comm::Message>(message_of(from, tag, std::move(payload), wire_bytes));
  if (endpoints_.closed(from)) {
    const std::string why = endpoints_.is_closed_message(from);
    complete_later(from, std::move(on_done), std::make_exception_ptr(TransportError(from, why)), 0);
    return;
  }
  if (from == to) {  // no network, one event later (as the ns-3 transport)
    complete_later(from, std::move(on_done), nullptr, wire_bytes);
    deliver_later(from, std::move(message), clock_.now_s());
    return;
  }
  if (endpoints_.closed(to)) {
    const std::string why = endpoints_.left_message(to);
    complete_later(from, std::move(on_done), std::make_exception_ptr(TransportError(to, why)), 0);
    report_later(from, to, why);
    return;
  }
  const uint64_t id = next_id_++;
  in_flight_[id] = InFlight{from, to, std::move(message), std::move(on_done), wire_bytes};
  const double now = clock_.now_s();
  for (const auto& milestone : model_.advance_to(now)) on_milestone(milestone);
  model_.send(connection_of_[static_cast<std::size_t>(from) * world_size() + to], kFrameHeaderBytes + wire_bytes, id, now);
  wake_at(model_.next_event_s());
}

void FlowFabric::pump() {
  if (detached_) return;
  double now = clock_.now_s();
  if (model_.next_event_s() <= now + kClockGrain) now = std::max(now, model_.next_event_s());
  for (const auto& milestone : model_.advance_to(now)) on_milestone(milestone);
  wake_at(model_.next_event_s());
}

// One pending wake-up at a time, at the model's next event.
void FlowFabric::wake_at(double at_s) {
  if (detached_) return;
  if (wake_pending_ && wake_s_ == at_s) return;
  if (wake_pending_) clock_.cancel(wake_handle_);
  wake_pending_ = false;
  if (at_s == FlowModel::kNever) return;
  std::weak_ptr<FlowFabric> weak = weak_from_this();
  wake_s_ = at_s;
  wake_pending_ = true;
  wake_handle_ = clock_.call_at(at_s, [weak]() {
    auto self = weak.lock();
    if (!self) return;
    self->wake_pending_ = false;
    self->pump();
  });
}

void FlowFabric::on_milestone(const FlowModel::Milestone& milestone) {
  const auto it = in_flight_.find(milestone.id);
  if (it == in_flight_.end()) return;
  InFlight& sent = it->second;
  if (milestone.kind == FlowModel::Milestone::Kind::handed) {
    if (!sent.failed) {
      sent.handed = true;
      complete_later(sent.from, std::move(sent.on_done), nullptr, sent.wire_bytes);
    }
    return;
  }
  if (!sent.failed) deliver_later(sent.to, std::move(sent.message), milestone.at_s);
  in_flight_.erase(it);
}

// --- close -------------------------------------------------------------------

void FlowFabric::fail(uint64_t id, Rank blamed, const std::string& why, bool report) {
  InFlight& sent = in_flight_.at(id);
  sent.failed = true;
  complete_later(sent.from, std::move(sent.on_done), std::make_exception_ptr(TransportError(blamed, why)), 0);
  if (report) report_later(sent.from, blamed, why);
}

// Sends not yet handed over fail (their bytes, the pair's last, still cross
// the model's link but are never delivered); handed ones still arrive,
// except at the closed rank itself.
void FlowFabric::close(Rank rank) {
  if (!endpoints_.close(rank)) return;
  const std::string closed = endpoints_.is_closed_message(rank);
  const std::string left = endpoints_.left_message(rank);
  for (auto& [id, sent] : in_flight_) {
    if (sent.handed || sent.failed) continue;
    if (sent.from == rank) fail(id, rank, closed, false);
    else if (sent.to == rank) fail(id, rank, left, true);
  }
}

// --- user callbacks, always deferred (FabricEndpoints says what they do) ------

void FlowFabric::complete_later(Rank rank, comm::SendCallback on_done, std::exception_ptr error, uint64_t wire_bytes) {
  if (!error) endpoints_.count_sent(rank, wire_bytes);
  if (!on_done || detached_) return;
  std::weak_ptr<FlowFabric> weak = weak_from_this();
  clock_.call_at(clock_.now_s(), [weak, on_done = std::move(on_done), error]() {
    if (weak.lock()) on_done(error);
  });
}

void FlowFabric::deliver_later(Rank to, std::shared_ptr<comm::Message> message, double at_s) {
  if (detached_) return;
  std::weak_ptr<FlowFabric> weak = weak_from_this();
  clock_.call_at(at_s, [weak, to, message]() {
    if (auto self = weak.lock()) self->endpoints_.deliver(to, std::move(*message));
  });
}

void FlowFabric::report_later(Rank rank, Rank peer, const std::string& what) {
  if (detached_ || !endpoints_.first_report(rank, peer)) return;
  std::weak_ptr<FlowFabric> weak = weak_from_this();
  clock_.call_at(clock_.now_s(), [weak, rank, peer, what]() {
    if (auto self = weak.lock()) self->endpoints_.report(rank, peer, what);
  });
}

// --- accessors ---------------------------------------------------------------

void FlowFabric::set_receive_handler(Rank rank, comm::ReceiveHandler handler) {
  endpoints_.set_receive_handler(rank, std::move(handler));
}

void FlowFabric::set_error_handler(Rank rank, comm::ErrorHandler handler) {
  endpoints_.set_error_handler(rank, std::move(handler));
}

comm::TransportStats FlowFabric::stats(Rank rank) const { return endpoints_.stats(rank); }

void FlowFabric::detach() {
  if (wake_pending_) clock_.cancel(wake_handle_);
  wake_pending_ = false;
  detached_ = true;
}

}  // namespace st::sim::flow
