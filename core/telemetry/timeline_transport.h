#pragma once
// A Transport decorator that adds every send to a run's Timeline (from
// send() to its completion callback, on the executor's clock) and changes
// nothing else, like MeteredTransport beside it.
#include "core/comm/transport.h"
#include "core/runtime/executor.h"
#include "core/runtime/timeline.h"

namespace st::telemetry {

class TimelineTransport final : public comm::Transport {
 public:
  // `inner`, `executor` and `timeline` must outlive this object.
  TimelineTransport(comm::Transport& inner, runtime::Executor& executor, runtime::Timeline& timeline)
      : inner_(inner), executor_(executor), timeline_(timeline) {}

  comm::Rank rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  void on_receive(comm::ReceiveHandler handler) override { inner_.on_receive(std::move(handler)); }
  void on_error(comm::ErrorHandler handler) override { inner_.on_error(std::move(handler)); }
  void send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, comm::SendCallback on_done) override;
  void send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                         comm::SendCallback on_done) override;
  comm::TransportStats stats() const override { return inner_.stats(); }
  void close() override { inner_.close(); }

 private:
  // The span of a send of `wire_bytes` to `destination`, closed by the
  // callback it returns.
  comm::SendCallback recorded(comm::Rank destination, uint64_t wire_bytes, comm::SendCallback on_done);

  comm::Transport& inner_;
  runtime::Executor& executor_;
  runtime::Timeline& timeline_;
};

}  // namespace st::telemetry
