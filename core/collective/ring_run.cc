#include "core/collective/ring_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace st::collective::detail {

std::vector<uint8_t> data_payload(std::size_t body_bytes) {
  std::vector<uint8_t> payload(kHeaderBytes + body_bytes);
  payload[0] = static_cast<uint8_t>(MessageKind::kData);
  return payload;
}

std::string describe(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown error";
  }
}

namespace {

std::vector<uint8_t> abort_payload(const std::string& root_cause) {
  std::vector<uint8_t> payload(kHeaderBytes + root_cause.size());
  payload[0] = static_cast<uint8_t>(MessageKind::kAbort);
  std::copy(root_cause.begin(), root_cause.end(), payload.begin() + kHeaderBytes);
  return payload;
}

}  // namespace

RingRun::RingRun(Communicator& comm, uint32_t collective_id, std::vector<int> send_steps, Finisher finisher,
                 WireScale scale)
    : comm_(comm),
      id_(collective_id),
      send_steps_(std::move(send_steps)),
      scale_(scale),
      started_at_(comm.executor().now()),
      finisher_(std::move(finisher)),
      step_sent_(send_steps_.size(), false) {}

std::shared_ptr<RingRun> RingRun::create(Communicator& comm, uint32_t collective_id, std::vector<int> send_steps,
                                         Finisher finisher, WireScale scale) {
  auto run = std::make_shared<RingRun>(comm, collective_id, std::move(send_steps), std::move(finisher), scale);
  std::weak_ptr<RingRun> weak = run;
  const uint64_t watch_id = comm.watch([weak](std::exception_ptr error) {
    if (auto run = weak.lock()) run->fail_with(error, fmt::format("rank {}: {}", run->comm_.rank(), describe(error)));
  });
  std::lock_guard<std::mutex> lock(run->mutex_);
  run->watch_id_ = watch_id;
  return run;
}

void RingRun::expect(int step, MessageHandler handler) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    ++outstanding_;
  }
  auto self = shared_from_this();
  const auto id = comm_.mailbox().recv(
      previous_rank(), collective_tag(id_, step),
      [self, step, handler = std::move(handler)](std::exception_ptr error, comm::Message&& message) mutable {
        if (error) {
          self->fail_with(error, fmt::format("rank {}: {}", self->comm_.rank(), describe(error)));
          self->operation_done();
          return;
        }
        // The arithmetic runs on a worker, not on the transport's thread.
        const uint64_t wire_bytes = comm::wire_size(message);
        self->comm_.executor().post(
            [self, step, wire_bytes, handler = std::move(handler), payload = std::move(message.payload)]() mutable {
              self->on_message(step, std::move(payload), wire_bytes, handler);
              self->operation_done();
            });
      });
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failed_) {
      receives_.push_back(id);  // a receive that already fired just fails to cancel later
      return;
    }
  }
  comm_.mailbox().cancel(id);  // failed meanwhile, after fail_with() swept the receives
}

void RingRun::on_message(int step, std::vector<uint8_t>&& payload, uint64_t wire_bytes, const MessageHandler& handler) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    stats_.bytes_received += wire_bytes;
    stats_.messages_received += 1;
  }
  if (payload.size() < kHeaderBytes || payload[0] > static_cast<uint8_t>(MessageKind::kAbort)) {
    fail(std::make_exception_ptr(CollectiveError(fmt::format(
        "collective {}: step {} message from rank {} has a bad header ({} bytes)", id_, step, previous_rank(),
        payload.size()))));
    return;
  }
  if (payload[0] == static_cast<uint8_t>(MessageKind::kAbort)) {
    std::string root_cause(payload.begin() + kHeaderBytes, payload.end());
    fail_with(std::make_exception_ptr(CollectiveError(
                  fmt::format("collective {}: aborted upstream; first failure: {}", id_, root_cause))),
              root_cause);
    return;
  }
  try {
    handler(std::move(payload));
  } catch (...) {
    fail(std::current_exception());
  }
}

void RingRun::send(int step, std::vector<uint8_t> payload) {
  // The payload's own size unless it is a sample (every transport takes
  // that; only a simulated one takes more).
  const uint64_t wire_bytes = scale_.wire_bytes(payload.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_) return;
    const auto at = std::lower_bound(send_steps_.begin(), send_steps_.end(), step);
    if (at != send_steps_.end() && *at == step) step_sent_[at - send_steps_.begin()] = true;
    ++outstanding_;
    stats_.bytes_sent += wire_bytes;
    stats_.messages_sent += 1;
  }
  auto self = shared_from_this();
  comm_.transport().send_standing_for(next_rank(), collective_tag(id_, step), std::move(payload), wire_bytes,
                                      [self](std::exception_ptr error) {
                                        if (error)
                                          self->fail_with(error, fmt::format("rank {}: {}", self->comm_.rank(),
                                                                             describe(error)));
                                        self->operation_done();
                                      });
}

void RingRun::fail(std::exception_ptr error) {
  fail_with(error, fmt::format("rank {}: {}", comm_.rank(), describe(error)));
}

void RingRun::fail_with(std::exception_ptr error, std::string root_cause) {
  std::vector<comm::Mailbox::ReceiveId> to_cancel;
  int abort_step = -1;
  CollectiveStats stats;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failed_ || finished_) return;
    failed_ = true;
    to_cancel.swap(receives_);
    for (std::size_t i = 0; i < send_steps_.size() && abort_step < 0; ++i)
      if (!step_sent_[i]) abort_step = send_steps_[i];
    stats = stats_;
  }
  for (auto id : to_cancel) comm_.mailbox().cancel(id);
  if (abort_step >= 0) {
    auto payload = abort_payload(root_cause);
    stats.bytes_sent += payload.size();
    stats.messages_sent += 1;
    comm_.transport().send(next_rank(), collective_tag(id_, abort_step), std::move(payload), [](std::exception_ptr) {});
  }
  finish(error, stats);
}

void RingRun::operation_done() {
  CollectiveStats stats;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--outstanding_ > 0 || failed_ || finished_) return;
    finished_ = true;
    stats = stats_;
  }
  finish(nullptr, stats);
}

void RingRun::finish(std::exception_ptr error, CollectiveStats stats) {
  stats.elapsed = comm_.executor().now() - started_at_;
  Finisher finisher;
  uint64_t watch_id = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    finisher.swap(finisher_);  // once, and no cycle through captured state
    std::swap(watch_id, watch_id_);
  }
  if (watch_id != 0) comm_.unwatch(watch_id);
  if (!finisher) return;
  comm_.executor().post([finisher = std::move(finisher), error, stats] { finisher(error, stats); });
}

}  // namespace st::collective::detail
