#include "sim/fabric_endpoints.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace st::sim {

FabricEndpoints::FabricEndpoints(int world, std::string transport)
    : transport_(std::move(transport)), endpoints_(static_cast<std::size_t>(world)) {}

void FabricEndpoints::check_rank(comm::Rank rank, const char* what) const {
  if (rank < 0 || rank >= world_size())
    throw std::invalid_argument(fmt::format("{}: {} {} outside world of {}", transport_, what, rank, world_size()));
}

void FabricEndpoints::set_receive_handler(comm::Rank rank, comm::ReceiveHandler handler) {
  check_rank(rank, "rank");
  endpoints_[static_cast<std::size_t>(rank)].receive = std::move(handler);
}

void FabricEndpoints::set_error_handler(comm::Rank rank, comm::ErrorHandler handler) {
  check_rank(rank, "rank");
  endpoints_[static_cast<std::size_t>(rank)].error = std::move(handler);
}

comm::TransportStats FabricEndpoints::stats(comm::Rank rank) const {
  check_rank(rank, "rank");
  return endpoints_[static_cast<std::size_t>(rank)].stats;
}

uint64_t FabricEndpoints::dropped_messages(comm::Rank rank) const {
  check_rank(rank, "rank");
  return endpoints_[static_cast<std::size_t>(rank)].dropped;
}

bool FabricEndpoints::close(comm::Rank rank) {
  check_rank(rank, "rank");
  bool& closed = endpoints_[static_cast<std::size_t>(rank)].closed;
  if (closed) return false;
  closed = true;
  return true;
}

comm::Message message_of(comm::Rank source, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes) {
  const uint64_t stood_for = wire_bytes == payload.size() ? 0 : wire_bytes;
  return comm::Message{source, tag, std::move(payload), stood_for};
}

void FabricEndpoints::count_sent(comm::Rank rank, uint64_t wire_bytes) {
  comm::TransportStats& stats = endpoints_[static_cast<std::size_t>(rank)].stats;
  stats.messages_sent += 1;
  stats.bytes_sent += wire_bytes;
}

bool FabricEndpoints::first_report(comm::Rank rank, comm::Rank peer) {
  Endpoint& endpoint = endpoints_[static_cast<std::size_t>(rank)];
  return !endpoint.closed && endpoint.reported.insert(peer).second;
}

void FabricEndpoints::deliver(comm::Rank to, comm::Message&& message) {
  Endpoint& endpoint = endpoints_[static_cast<std::size_t>(to)];
  if (endpoint.closed) return;
  if (!endpoint.receive) {
    endpoint.dropped += 1;
    return;
  }
  endpoint.stats.messages_received += 1;
  endpoint.stats.bytes_received += comm::wire_size(message);
  endpoint.receive(std::move(message));
}

void FabricEndpoints::report(comm::Rank rank, comm::Rank peer, const std::string& what) {
  Endpoint& endpoint = endpoints_[static_cast<std::size_t>(rank)];
  if (!endpoint.closed && endpoint.error) endpoint.error(comm::TransportError(peer, what));
}

std::string FabricEndpoints::is_closed_message(comm::Rank rank) const {
  return fmt::format("{}: rank {} is closed", transport_, rank);
}

std::string FabricEndpoints::left_message(comm::Rank rank) const {
  return fmt::format("{}: rank {} left (closed)", transport_, rank);
}

}  // namespace st::sim
