#include "core/comm/mailbox.h"

#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace st::comm {
namespace {

using Key = uint64_t;
Key key_of(Rank source, uint32_t tag) { return (static_cast<uint64_t>(static_cast<uint32_t>(source)) << 32) | tag; }
Rank source_of(Key key) { return static_cast<Rank>(static_cast<uint32_t>(key >> 32)); }

struct PendingReceive {
  Mailbox::ReceiveId id = 0;
  ReceiveCallback callback;
};

}  // namespace

class Mailbox::State {
 public:
  explicit State(Rank own_rank) : own_rank_(own_rank) {}

  ReceiveId recv(Rank source, uint32_t tag, ReceiveCallback callback) {
    std::unique_lock<std::mutex> lock(mutex_);
    const ReceiveId id = next_id_++;
    const Key key = key_of(source, tag);
    if (auto it = buffered_.find(key); it != buffered_.end()) {
      Message message = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) buffered_.erase(it);
      lock.unlock();
      callback(nullptr, std::move(message));
      return id;
    }
    if (std::exception_ptr error = error_for(source)) {
      lock.unlock();
      callback(error, Message{});
      return id;
    }
    pending_[key].push_back(PendingReceive{id, std::move(callback)});
    pending_keys_.emplace(id, key);
    return id;
  }

  bool cancel(ReceiveId id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto key_it = pending_keys_.find(id);
    if (key_it == pending_keys_.end()) return false;
    auto queue_it = pending_.find(key_it->second);
    auto& queue = queue_it->second;
    for (auto it = queue.begin(); it != queue.end(); ++it) {
      if (it->id != id) continue;
      queue.erase(it);
      break;
    }
    if (queue.empty()) pending_.erase(queue_it);
    pending_keys_.erase(key_it);
    return true;
  }

  void deliver(Message&& message) {
    std::unique_lock<std::mutex> lock(mutex_);
    const Key key = key_of(message.source, message.tag);
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      buffered_[key].push_back(std::move(message));
      return;
    }
    PendingReceive receive = take_front(it);
    lock.unlock();
    receive.callback(nullptr, std::move(message));
  }

  void fail(const TransportError& error) {
    std::vector<PendingReceive> failed;
    std::vector<ErrorHandler> observers;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const bool whole_endpoint = error.peer() < 0 || error.peer() == own_rank_;
      auto stored = std::make_exception_ptr(error);
      if (whole_endpoint) {
        if (!endpoint_error_) endpoint_error_ = stored;
      } else {
        peer_errors_.emplace(error.peer(), stored);
      }
      for (auto it = pending_.begin(); it != pending_.end();) {
        if (whole_endpoint || source_of(it->first) == error.peer()) {
          for (auto& receive : it->second) {
            pending_keys_.erase(receive.id);
            failed.push_back(std::move(receive));
          }
          it = pending_.erase(it);
        } else {
          ++it;
        }
      }
      observers = observers_;
    }
    const auto error_ptr = std::make_exception_ptr(error);
    for (auto& receive : failed) receive.callback(error_ptr, Message{});
    for (auto& observer : observers) observer(error);
  }

  void add_observer(ErrorHandler handler) {
    std::lock_guard<std::mutex> lock(mutex_);
    observers_.push_back(std::move(handler));
  }

  void drop_pending() {
    // Destroyed outside the lock: a callback's captures may own anything.
    std::unordered_map<Key, std::deque<PendingReceive>> dropped;
    std::vector<ErrorHandler> dropped_observers;
    std::lock_guard<std::mutex> lock(mutex_);
    dropped.swap(pending_);
    dropped_observers.swap(observers_);
    pending_keys_.clear();
  }

  std::size_t buffered_messages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::size_t total = 0;
    for (const auto& entry : buffered_) total += entry.second.size();
    return total;
  }

  std::size_t pending_receives() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_keys_.size();
  }

 private:
  // Requires the lock.
  std::exception_ptr error_for(Rank source) const {
    if (endpoint_error_) return endpoint_error_;
    auto it = peer_errors_.find(source);
    return it == peer_errors_.end() ? nullptr : it->second;
  }

  PendingReceive take_front(std::unordered_map<Key, std::deque<PendingReceive>>::iterator it) {
    PendingReceive receive = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) pending_.erase(it);
    pending_keys_.erase(receive.id);
    return receive;
  }

  const Rank own_rank_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::deque<Message>> buffered_;
  std::unordered_map<Key, std::deque<PendingReceive>> pending_;
  std::unordered_map<ReceiveId, Key> pending_keys_;
  std::unordered_map<Rank, std::exception_ptr> peer_errors_;
  std::exception_ptr endpoint_error_;
  std::vector<ErrorHandler> observers_;
  ReceiveId next_id_ = 1;
};

Mailbox::Mailbox(Transport& transport)
    : transport_(transport), state_(std::make_shared<State>(transport.rank())) {
  // The handlers hold the state, not `this`: the transport may call them
  // after the Mailbox object is gone.
  transport.on_receive([state = state_](Message&& message) { state->deliver(std::move(message)); });
  transport.on_error([state = state_](const TransportError& error) { state->fail(error); });
}

Mailbox::~Mailbox() { state_->drop_pending(); }

Transport& Mailbox::transport() const { return transport_; }

Mailbox::ReceiveId Mailbox::recv(Rank source, uint32_t tag, ReceiveCallback callback) {
  return state_->recv(source, tag, std::move(callback));
}

bool Mailbox::cancel(ReceiveId id) { return state_->cancel(id); }
void Mailbox::on_error(ErrorHandler handler) { state_->add_observer(std::move(handler)); }
std::size_t Mailbox::buffered_messages() const { return state_->buffered_messages(); }
std::size_t Mailbox::pending_receives() const { return state_->pending_receives(); }

}  // namespace st::comm
