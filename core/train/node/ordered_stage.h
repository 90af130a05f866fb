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
#include <memory>
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
  // Whether a job's `next` came before the job returned (then the loop
  // below starts the following job) or later (then `next` does).
  struct Call {
    bool returned = false;
    bool next_called = false;
  };

  // Runs ready jobs in a loop rather than by recursion: a job that calls
  // `next` before it returns hands the following job back to this loop, so
  // the stack stays as deep as one job however many are queued.
  void run_ready(std::unique_lock<std::mutex>& lock) {
    while (!running_) {
      auto it = pending_.find(next_);
      if (it == pending_.end()) return;
      Job job = std::move(it->second);
      pending_.erase(it);
      running_ = true;
      auto call = std::make_shared<Call>();
      lock.unlock();
      job([this, call] {
        std::unique_lock<std::mutex> relock(mutex_);
        running_ = false;
        ++next_;
        if (!call->returned) {
          call->next_called = true;  // the loop that ran the job goes on
          return;
        }
        run_ready(relock);  // later, from another task: a fresh stack
      });
      lock.lock();
      call->returned = true;
      if (!call->next_called) return;  // the job's `next` will go on
    }
  }

  std::mutex mutex_;
  std::map<uint64_t, Job> pending_;
  uint64_t next_ = 0;
  bool running_ = false;
};

}  // namespace st::train
