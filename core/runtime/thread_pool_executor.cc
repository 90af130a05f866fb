// The real executor: a fixed pool of threads, a timer queue on the steady
// clock, and run_until() for the top-level thread. Hand-written on
// std::thread because the seam needs exactly these four operations and the
// pool must report task exceptions to run_until(); Asio's thread_pool would
// bring the timers but not that.
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/runtime/executor.h"

namespace st::runtime {
namespace {

using SteadyClock = std::chrono::steady_clock;

class ThreadPoolExecutor final : public Executor {
 public:
  explicit ThreadPoolExecutor(int workers) : start_(SteadyClock::now()) {
    if (workers < 1) throw std::invalid_argument("thread-pool executor needs at least 1 worker");
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { worker_loop(); });
    timer_thread_ = std::thread([this] { timer_loop(); });
  }

  ~ThreadPoolExecutor() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    work_cv_.notify_all();
    timer_cv_.notify_all();
    for (auto& t : threads_) t.join();
    timer_thread_.join();
  }

  Nanos now() const override { return std::chrono::duration_cast<Nanos>(SteadyClock::now() - start_); }

  void post(Task task) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
    }
    work_cv_.notify_one();
  }

  void post_after(Nanos delay, Task task) override {
    if (delay <= Nanos::zero()) return post(std::move(task));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      timers_.emplace(SteadyClock::now() + delay, std::move(task));
    }
    timer_cv_.notify_one();
  }

  void compute(Task work, ComputeCost, Task done) override {
    post([work = std::move(work), done = std::move(done)] {
      work();
      done();
    });
  }

  // The work is on a pool thread right now and really has reached the mark.
  void post_progress(int, Task task) override { post(std::move(task)); }

  void run_until(const std::function<bool()>& finished) override {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
      lock.unlock();
      const bool done = finished();
      lock.lock();
      if (done) return;
      const uint64_t seen = completed_;
      // Also wake now and then: finished() may depend on events from outside
      // the executor (a transport thread).
      progress_cv_.wait_for(lock, std::chrono::milliseconds(20), [&] { return completed_ != seen || error_; });
    }
  }

  int workers() const override { return static_cast<int>(threads_.size()); }

 private:
  void worker_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      work_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      // Stopping drops what is still queued: the executor is destroyed after
      // a run ended (or failed), and queued tasks may refer to engine state
      // that is about to go away; no task may outlive it.
      if (stopping_) return;
      Task task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      std::exception_ptr failure;
      try {
        task();
      } catch (...) {
        failure = std::current_exception();
      }
      lock.lock();
      if (failure && !error_) error_ = failure;
      ++completed_;
      progress_cv_.notify_all();
    }
  }

  void timer_loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (timers_.empty()) {
        timer_cv_.wait(lock);
        continue;
      }
      const auto due = timers_.begin()->first;
      if (SteadyClock::now() < due) {
        timer_cv_.wait_until(lock, due);
        continue;
      }
      Task task = std::move(timers_.begin()->second);
      timers_.erase(timers_.begin());
      queue_.push_back(std::move(task));
      work_cv_.notify_one();
    }
  }

  const SteadyClock::time_point start_;
  std::mutex mutex_;
  std::condition_variable work_cv_, timer_cv_, progress_cv_;
  std::deque<Task> queue_;
  std::multimap<SteadyClock::time_point, Task> timers_;
  std::vector<std::thread> threads_;
  std::thread timer_thread_;
  std::exception_ptr error_;
  uint64_t completed_ = 0;
  bool stopping_ = false;
};

}  // namespace

std::unique_ptr<Executor> make_thread_pool_executor(int workers) {
  return std::make_unique<ThreadPoolExecutor>(workers);
}

}  // namespace st::runtime
