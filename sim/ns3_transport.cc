#include "sim/ns3_transport.h"

#include "sim/ns3_fabric.h"

namespace st::sim {

Ns3Transport::Ns3Transport(std::shared_ptr<Ns3Fabric> fabric, comm::Rank rank)
    : fabric_(std::move(fabric)), rank_(rank) {}

int Ns3Transport::world_size() const { return fabric_->world_size(); }

void Ns3Transport::on_receive(comm::ReceiveHandler handler) { fabric_->set_receive_handler(rank_, std::move(handler)); }

void Ns3Transport::on_error(comm::ErrorHandler handler) { fabric_->set_error_handler(rank_, std::move(handler)); }

void Ns3Transport::send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                        comm::SendCallback on_done) {
  const uint64_t wire_bytes = payload.size();
  fabric_->send(rank_, destination, tag, std::move(payload), wire_bytes, std::move(on_done));
}

void Ns3Transport::send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                                     uint64_t wire_bytes, comm::SendCallback on_done) {
  fabric_->send(rank_, destination, tag, std::move(payload), wire_bytes, std::move(on_done));
}

comm::TransportStats Ns3Transport::stats() const { return fabric_->stats(rank_); }

void Ns3Transport::close() { fabric_->close(rank_); }

uint64_t Ns3Transport::stream_bytes_from(comm::Rank source) const { return fabric_->stream_bytes(source, rank_); }

uint64_t Ns3Transport::dropped_messages() const { return fabric_->dropped_messages(rank_); }

}  // namespace st::sim
