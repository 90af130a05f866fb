#include "core/telemetry/timeline_transport.h"

namespace st::telemetry {

void TimelineTransport::send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload,
                             comm::SendCallback on_done) {
  runtime::Timeline::Span span;
  span.name = "send";
  span.node = inner_.rank();
  span.lane = runtime::Timeline::kNetworkLane;
  span.peer = destination;
  span.bytes = payload.size();
  span.start = executor_.now();
  inner_.send(destination, tag, std::move(payload),
              [this, span, on_done = std::move(on_done)](std::exception_ptr error) mutable {
                span.end = executor_.now();
                timeline_.add(span);
                if (on_done) on_done(error);
              });
}

}  // namespace st::telemetry
