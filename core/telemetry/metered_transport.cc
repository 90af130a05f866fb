#include "core/telemetry/metered_transport.h"

namespace st::telemetry {

MeteredTransport::MeteredTransport(comm::Transport& inner, runtime::Executor& executor)
    : inner_(inner), executor_(executor), window_(inner.world_size()) {}

void MeteredTransport::on_receive(comm::ReceiveHandler handler) {
  inner_.on_receive([this, handler = std::move(handler)](comm::Message&& message) {
    if (message.source >= 0 && message.source < window_.peers())
      window_.add_received(message.source, message.payload.size(), executor_.now());
    handler(std::move(message));
  });
}

void MeteredTransport::send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                            comm::SendCallback on_done) {
  if (destination >= 0 && destination < window_.peers())
    window_.add_sent(destination, payload.size(), executor_.now());
  inner_.send(destination, tag, std::move(payload), std::move(on_done));
}

}  // namespace st::telemetry
