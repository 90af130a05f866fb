#include "core/telemetry/timeline_transport.h"

namespace st::telemetry {

comm::SendCallback TimelineTransport::recorded(comm::Rank destination, uint64_t wire_bytes, comm::SendCallback on_done) {
  runtime::Timeline::Span span;
  span.name = "send";
  span.node = inner_.rank();
  span.lane = runtime::Timeline::kNetworkLane;
  span.peer = destination;
  span.bytes = wire_bytes;
  span.start = executor_.now();
  return [this, span, on_done = std::move(on_done)](std::exception_ptr error) mutable {
    span.end = executor_.now();
    timeline_.add(span);
    if (on_done) on_done(error);
  };
}

void TimelineTransport::send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                             comm::SendCallback on_done) {
  auto done = recorded(destination, payload.size(), std::move(on_done));
  inner_.send(destination, tag, std::move(payload), std::move(done));
}

void TimelineTransport::send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                                          uint64_t wire_bytes, comm::SendCallback on_done) {
  auto done = recorded(destination, wire_bytes, std::move(on_done));
  inner_.send_standing_for(destination, tag, std::move(payload), wire_bytes, std::move(done));
}

}  // namespace st::telemetry
