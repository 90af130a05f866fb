#include "core/collective/communicator.h"

namespace st::collective {

CollectiveStats& CollectiveStats::operator+=(const CollectiveStats& other) {
  bytes_sent += other.bytes_sent;
  bytes_received += other.bytes_received;
  messages_sent += other.messages_sent;
  messages_received += other.messages_received;
  elapsed += other.elapsed;
  return *this;
}

Communicator::Communicator(comm::Transport& transport, comm::Mailbox& mailbox, runtime::Executor& executor)
    : transport_(transport), mailbox_(mailbox), executor_(executor) {
  if (&mailbox.transport() != &transport)
    throw std::invalid_argument("communicator: the mailbox is installed on a different transport");
  mailbox.on_error([watchers = watchers_](const comm::TransportError& error) {
    std::map<uint64_t, BrokenHandler> handlers;
    std::exception_ptr broken;
    {
      std::lock_guard<std::mutex> lock(watchers->mutex);
      if (!watchers->broken) watchers->broken = std::make_exception_ptr(error);
      broken = watchers->broken;
      handlers.swap(watchers->handlers);
    }
    for (auto& [id, handler] : handlers) handler(broken);
  });
}

uint64_t Communicator::watch(BrokenHandler handler) {
  std::exception_ptr broken;
  {
    std::lock_guard<std::mutex> lock(watchers_->mutex);
    if (!watchers_->broken) {
      const uint64_t id = watchers_->next_id++;
      watchers_->handlers.emplace(id, std::move(handler));
      return id;
    }
    broken = watchers_->broken;
  }
  handler(broken);
  return 0;
}

void Communicator::unwatch(uint64_t id) {
  std::lock_guard<std::mutex> lock(watchers_->mutex);
  watchers_->handlers.erase(id);
}

std::exception_ptr Communicator::broken() const {
  std::lock_guard<std::mutex> lock(watchers_->mutex);
  return watchers_->broken;
}

uint32_t Communicator::reserve_collective_ids(uint32_t count) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint32_t first = next_id_;
  next_id_ = (next_id_ + count) & kCollectiveIdMask;
  return first;
}

}  // namespace st::collective
