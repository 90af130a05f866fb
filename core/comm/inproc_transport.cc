#include "core/comm/inproc_transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <utility>

namespace st::comm {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Flight {
  Rank from = -1;
  Rank to = -1;
  uint32_t tag = 0;
  std::vector<uint8_t> payload;
  SendCallback on_done;
  std::exception_ptr error;  // set when the send is stopped by a close
};

enum class EventKind { kWireDone, kDeliver, kNotifyError };

struct Event {
  EventKind kind = EventKind::kWireDone;
  std::shared_ptr<Flight> flight;  // kWireDone, kDeliver
  Rank notify = -1;                // kNotifyError: whose handler runs
  Rank failed = -1;                // kNotifyError: the peer that went away
  bool notify_even_if_closed = false;
};

// Events fire in (due time, sequence) order; the sequence keeps FIFO order
// among events due at the same instant.
using EventKey = std::pair<SteadyClock::time_point, uint64_t>;

struct LinkState {
  LinkDelay delay;
  SteadyClock::time_point free_at{};       // when the link's wire is idle again
  SteadyClock::time_point last_arrival{};  // keeps per-pair order under jitter
};

}  // namespace

class InProcEndpoint;

class InProcFabric::Impl {
 public:
  Impl(int world_size, LinkDelay delay, uint64_t seed);
  void start_thread() { thread_ = std::thread([this] { delivery_loop(); }); }
  void stop_thread();

  int world_size() const { return world_size_; }
  InProcEndpoint& endpoint(Rank rank);
  void set_link_delay(Rank from, Rank to, LinkDelay delay);
  void close(Rank rank, bool tell_itself);

  // Called by endpoints.
  void send(Rank from, Rank to, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done);
  void set_handlers(Rank rank, ReceiveHandler* receive, ErrorHandler* error);
  TransportStats stats(Rank rank) const;

 private:
  struct EndpointState {
    ReceiveHandler receive;
    ErrorHandler error;
    TransportStats stats;
    bool closed = false;
  };

  void check_rank(Rank rank, const char* what) const;
  void schedule(SteadyClock::time_point due, Event event);
  SteadyClock::duration jitter_for(const LinkDelay& delay);
  std::exception_ptr closed_error(Rank closed_rank) const;
  void stop_flights_of(Rank rank, SteadyClock::time_point now);
  void delivery_loop();
  void run_event(Event& event, std::unique_lock<std::mutex>& lock);

  const int world_size_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<EventKey, Event> events_;
  uint64_t next_sequence_ = 0;
  std::vector<EndpointState> states_;
  std::vector<LinkState> links_;  // from * world_size + to
  std::vector<std::unique_ptr<InProcEndpoint>> endpoints_;
  std::mt19937_64 jitter_random_;
  bool stopping_ = false;
  std::thread thread_;
};

class InProcEndpoint final : public Transport {
 public:
  InProcEndpoint(InProcFabric::Impl& fabric, Rank rank) : fabric_(fabric), rank_(rank) {}
  Rank rank() const override { return rank_; }
  int world_size() const override { return fabric_.world_size(); }
  void on_receive(ReceiveHandler handler) override { fabric_.set_handlers(rank_, &handler, nullptr); }
  void on_error(ErrorHandler handler) override { fabric_.set_handlers(rank_, nullptr, &handler); }
  void send(Rank destination, uint32_t tag, std::vector<uint8_t> payload, SendCallback on_done) override {
    fabric_.send(rank_, destination, tag, std::move(payload), std::move(on_done));
  }
  TransportStats stats() const override { return fabric_.stats(rank_); }
  void close() override { fabric_.close(rank_, false); }

 private:
  InProcFabric::Impl& fabric_;
  const Rank rank_;
};

InProcFabric::Impl::Impl(int world_size, LinkDelay delay, uint64_t seed)
    : world_size_(world_size), jitter_random_(seed) {
  if (world_size < 1) throw std::invalid_argument(fmt::format("in-process fabric: world_size {} < 1", world_size));
  states_.resize(world_size);
  links_.resize(static_cast<std::size_t>(world_size) * world_size);
  for (Rank from = 0; from < world_size; ++from)
    for (Rank to = 0; to < world_size; ++to)
      if (from != to) links_[from * world_size + to].delay = delay;
  for (Rank rank = 0; rank < world_size; ++rank) endpoints_.push_back(std::make_unique<InProcEndpoint>(*this, rank));
}

void InProcFabric::Impl::check_rank(Rank rank, const char* what) const {
  if (rank < 0 || rank >= world_size_)
    throw std::invalid_argument(fmt::format("in-process fabric: {} {} outside world of {}", what, rank, world_size_));
}

InProcEndpoint& InProcFabric::Impl::endpoint(Rank rank) {
  check_rank(rank, "rank");
  return *endpoints_[rank];
}

void InProcFabric::Impl::set_link_delay(Rank from, Rank to, LinkDelay delay) {
  check_rank(from, "source rank");
  check_rank(to, "destination rank");
  std::lock_guard<std::mutex> lock(mutex_);
  links_[from * world_size_ + to].delay = delay;
}

void InProcFabric::Impl::set_handlers(Rank rank, ReceiveHandler* receive, ErrorHandler* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (receive) states_[rank].receive = std::move(*receive);
  if (error) states_[rank].error = std::move(*error);
}

TransportStats InProcFabric::Impl::stats(Rank rank) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return states_[rank].stats;
}

void InProcFabric::Impl::schedule(SteadyClock::time_point due, Event event) {
  events_.emplace(EventKey{due, next_sequence_++}, std::move(event));
  wake_.notify_one();
}

SteadyClock::duration InProcFabric::Impl::jitter_for(const LinkDelay& delay) {
  if (delay.jitter <= std::chrono::nanoseconds::zero()) return {};
  std::uniform_int_distribution<int64_t> pick(0, delay.jitter.count() - 1);
  return std::chrono::duration_cast<SteadyClock::duration>(std::chrono::nanoseconds(pick(jitter_random_)));
}

std::exception_ptr InProcFabric::Impl::closed_error(Rank closed_rank) const {
  return std::make_exception_ptr(
      TransportError(closed_rank, fmt::format("in-process transport: rank {} is closed", closed_rank)));
}

void InProcFabric::Impl::send(Rank from, Rank to, uint32_t tag, std::vector<uint8_t> payload,
                              SendCallback on_done) {
  check_rank(to, "destination rank");
  auto flight = std::make_shared<Flight>();
  *flight = Flight{from, to, tag, std::move(payload), std::move(on_done), nullptr};
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = SteadyClock::now();
  const Rank closed = states_[from].closed ? from : states_[to].closed ? to : -1;
  if (closed >= 0 || stopping_) {
    flight->error = closed_error(closed >= 0 ? closed : from);
    schedule(now, Event{EventKind::kWireDone, std::move(flight)});
    return;
  }
  LinkState& link = links_[from * world_size_ + to];
  auto wire_time = SteadyClock::duration::zero();
  if (link.delay.bytes_per_second > 0)
    wire_time = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(static_cast<double>(flight->payload.size()) / link.delay.bytes_per_second));
  const auto on_wire = std::max(now, link.free_at) + wire_time;
  link.free_at = on_wire;
  const auto arrival = std::max(on_wire + link.delay.latency + jitter_for(link.delay), link.last_arrival);
  link.last_arrival = arrival;
  schedule(on_wire, Event{EventKind::kWireDone, flight});
  schedule(arrival, Event{EventKind::kDeliver, std::move(flight)});
}

// Pending sends from or to `rank` complete now with an error; messages on
// the way are dropped.
void InProcFabric::Impl::stop_flights_of(Rank rank, SteadyClock::time_point now) {
  std::vector<Event> stopped;
  for (auto it = events_.begin(); it != events_.end();) {
    Flight* flight = it->second.flight.get();
    if (flight && (flight->from == rank || flight->to == rank)) {
      if (it->second.kind == EventKind::kWireDone) {
        flight->error = closed_error(rank);
        stopped.push_back(std::move(it->second));
      }
      it = events_.erase(it);
    } else {
      ++it;
    }
  }
  for (Event& event : stopped) schedule(now, std::move(event));
}

void InProcFabric::Impl::close(Rank rank, bool tell_itself) {
  check_rank(rank, "rank");
  std::lock_guard<std::mutex> lock(mutex_);
  if (states_[rank].closed) return;
  states_[rank].closed = true;
  const auto now = SteadyClock::now();
  stop_flights_of(rank, now);
  if (stopping_) return;  // tearing down: nobody is listening any more
  for (Rank other = 0; other < world_size_; ++other) {
    if (other == rank && !tell_itself) continue;
    schedule(now, Event{EventKind::kNotifyError, nullptr, other, rank, other == rank});
  }
}

void InProcFabric::Impl::run_event(Event& event, std::unique_lock<std::mutex>& lock) {
  switch (event.kind) {
    case EventKind::kWireDone: {
      Flight& flight = *event.flight;
      if (!flight.error) {
        states_[flight.from].stats.bytes_sent += flight.payload.size();
        states_[flight.from].stats.messages_sent += 1;
      }
      SendCallback on_done = std::move(flight.on_done);
      lock.unlock();
      if (on_done) on_done(flight.error);
      break;
    }
    case EventKind::kDeliver: {
      Flight& flight = *event.flight;
      EndpointState& target = states_[flight.to];
      target.stats.bytes_received += flight.payload.size();
      target.stats.messages_received += 1;
      ReceiveHandler handler = target.receive;
      lock.unlock();
      if (handler) handler(Message{flight.from, flight.tag, std::move(flight.payload)});
      break;
    }
    case EventKind::kNotifyError: {
      if (states_[event.notify].closed && !event.notify_even_if_closed) return;
      ErrorHandler handler = states_[event.notify].error;
      const std::string what =
          event.notify == event.failed
              ? fmt::format("in-process transport: rank {} failed (simulated)", event.failed)
              : fmt::format("in-process transport: peer rank {} closed its endpoint", event.failed);
      lock.unlock();
      if (handler) handler(TransportError(event.failed, what));
      break;
    }
  }
}

void InProcFabric::Impl::delivery_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (events_.empty()) {
      if (stopping_) return;
      wake_.wait(lock);
      continue;
    }
    const auto due = events_.begin()->first.first;
    if (!stopping_ && SteadyClock::now() < due) {
      wake_.wait_until(lock, due);
      continue;
    }
    Event event = std::move(events_.begin()->second);
    events_.erase(events_.begin());
    run_event(event, lock);  // may unlock to run a handler
    if (!lock.owns_lock()) lock.lock();
  }
}

void InProcFabric::Impl::stop_thread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  // Closing completes every pending send with an error, now; the loop then
  // runs what is left without waiting for due times and exits when empty.
  for (Rank rank = 0; rank < world_size_; ++rank) close(rank, false);
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

InProcFabric::InProcFabric(int world_size, LinkDelay delay, uint64_t jitter_seed)
    : impl_(std::make_shared<Impl>(world_size, delay, jitter_seed)) {
  impl_->start_thread();
}

InProcFabric::~InProcFabric() { shutdown(); }

void InProcFabric::shutdown() { impl_->stop_thread(); }

int InProcFabric::world_size() const { return impl_->world_size(); }
Transport& InProcFabric::endpoint(Rank rank) { return impl_->endpoint(rank); }
void InProcFabric::set_link_delay(Rank from, Rank to, LinkDelay delay) { impl_->set_link_delay(from, to, delay); }
void InProcFabric::fail(Rank rank) { impl_->close(rank, true); }

}  // namespace st::comm
