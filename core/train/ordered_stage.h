#pragma once
// Runs numbered jobs strictly in number order, one at a time, whatever order
// they are submitted in: job k starts once job k-1 has called its `next`.
// Used per layer so that compress and optimizer steps of iteration t+1 never
// overtake those of iteration t (error-feedback residuals and optimizer state
// depend on the order), and across layers so that every rank starts its
// collectives in the same order.
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace st::train {

class OrderedStage {
 public:
  // `job` receives a `next` callback to call when it is done (it may call it
  // from another task later).
  using Job = std::function<void(std::function<void()> next)>;

  void submit(uint64_t number, Job job) {
    std::unique_lock<std::mutex> lock(mutex_);
    pending_.emplace(number, std::move(job));
    if (!running_) run_ready(lock);
  }

 private:
  void run_ready(std::unique_lock<std::mutex>& lock) {
    auto it = pending_.find(next_);
    if (it == pending_.end()) return;
    Job job = std::move(it->second);
    pending_.erase(it);
    running_ = true;
    lock.unlock();
    job([this] {
      std::unique_lock<std::mutex> relock(mutex_);
      running_ = false;
      ++next_;
      run_ready(relock);
    });
  }

  std::mutex mutex_;
  std::map<uint64_t, Job> pending_;
  uint64_t next_ = 0;
  bool running_ = false;
};

}  // namespace st::train
