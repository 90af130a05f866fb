#pragma once
// A Transport decorator that counts every message's wire bytes per peer
// into a ByteWindow on the executor's clock: sent bytes when send() is
// called, received bytes when the message is delivered. It changes nothing
// else (ordering, errors, callbacks pass straight through), so it wraps any
// backend's transport, as the error-feedback decorator wraps any compressor.
#include <memory>

#include "core/comm/transport.h"
#include "core/runtime/executor.h"
#include "core/telemetry/byte_window.h"

namespace st::telemetry {

class MeteredTransport final : public comm::Transport {
 public:
  // `inner` and `executor` must outlive this object.
  MeteredTransport(comm::Transport& inner, runtime::Executor& executor);

  comm::Rank rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  void on_receive(comm::ReceiveHandler handler) override;
  void on_error(comm::ErrorHandler handler) override { inner_.on_error(std::move(handler)); }
  void send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, comm::SendCallback on_done) override;
  void send_standing_for(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                         comm::SendCallback on_done) override;
  comm::TransportStats stats() const override { return inner_.stats(); }
  void close() override { inner_.close(); }

  // Per-peer bytes over the last second (ten 100 ms sub-windows).
  WindowTotals window_totals() const { return window_.totals(executor_.now()); }

 private:
  void count_sent(comm::Rank destination, uint64_t bytes);

  comm::Transport& inner_;
  runtime::Executor& executor_;
  ByteWindow window_;
};

}  // namespace st::telemetry
