#include "core/telemetry/metered_transport.h"

namespace st::telemetry {

MeteredTransport::MeteredTransport(comm::Transport& inner, runtime::Executor& executor)
    : inner_(inner), executor_(executor), window_(inner.world_size()) {}

// Wire bytes: a sampled message (send_standing_for) counts as what it
// stood for, which is what the controller must see of the network.
void MeteredTransport::on_receive(comm::ReceiveHandler handler) {
  inner_.on_receive([this, handler = std::move(handler)](comm::Message&& message) {
    if (message.source >= 0 && message.source < window_.peers())
      window_.add_received(message.source, comm::wire_size(message), executor_.now());
    handler(std::move(message));
  });
}

void MeteredTransport::count_sent(comm::Rank destination, uint64_t bytes) {
  if (destination >= 0 && destination < window_.peers()) window_.add_sent(destination, bytes, executor_.now());
}

void MeteredTransport::send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                            comm::SendCallback on_done) {
  count_sent(destination, payload.size());
  inner_.send(destination, tag, std::move(payload), std::move(on_done));
}

void MeteredTransport::send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                                         uint64_t wire_bytes, comm::SendCallback on_done) {
  count_sent(destination, wire_bytes);
  inner_.send_standing_for(destination, tag, std::move(payload), wire_bytes, std::move(on_done));
}

}  // namespace st::telemetry
