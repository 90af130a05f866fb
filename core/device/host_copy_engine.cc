// The host-thread CopyEngine: what a CUDA side stream does, with a thread.
// Copies run one after another in the order they were enqueued; a mark is
// the count of copies enqueued before it. It lets the staging logic's
// ordering be exercised, and tested, without a GPU.
#include <ATen/ATen.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/device/copy_engine.h"

namespace st::device {
namespace {

struct Queue {
  std::mutex mutex;
  std::exception_ptr error;  // the first copy that threw; every later wait rethrows it
  std::condition_variable changed;
  std::deque<std::function<void()>> pending;
  uint64_t enqueued = 0;
  uint64_t finished = 0;
  bool stopping = false;
};

class HostMark final : public CopyMark {
 public:
  HostMark(std::shared_ptr<Queue> queue, uint64_t after) : queue_(std::move(queue)), after_(after) {}
  void wait() const override {
    std::unique_lock<std::mutex> lock(queue_->mutex);
    queue_->changed.wait(lock, [&] { return queue_->finished >= after_; });
    if (queue_->error) std::rethrow_exception(queue_->error);
  }
  bool ready() const override {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    return queue_->finished >= after_;
  }

 private:
  std::shared_ptr<Queue> queue_;
  uint64_t after_;
};

class HostThreadCopyEngine final : public CopyEngine {
 public:
  explicit HostThreadCopyEngine(std::function<void()> before_copy)
      : queue_(std::make_shared<Queue>()), before_copy_(std::move(before_copy)), thread_([this] { drain(); }) {}

  ~HostThreadCopyEngine() override {
    {
      std::lock_guard<std::mutex> lock(queue_->mutex);
      queue_->stopping = true;
    }
    queue_->changed.notify_all();
    thread_.join();
  }

  void follow_compute() override {}

  void copy(const at::Tensor& src, const at::Tensor& dst) override {
    if (src.numel() != dst.numel())
      throw std::invalid_argument("host copy engine: copying " + std::to_string(src.numel()) + " elements into " +
                                  std::to_string(dst.numel()));
    // Tensors are reference-counted handles: the queue keeps both alive
    // until the copy ran, as CUDA's caching allocator is told to.
    {
      std::lock_guard<std::mutex> lock(queue_->mutex);
      queue_->pending.emplace_back([src, dst] { dst.view(-1).copy_(src.reshape(-1)); });
      ++queue_->enqueued;
    }
    queue_->changed.notify_all();
  }

  std::shared_ptr<CopyMark> mark() override {
    std::lock_guard<std::mutex> lock(queue_->mutex);
    return std::make_shared<HostMark>(queue_, queue_->enqueued);
  }

  void compute_waits(const CopyMark& mark) override { mark.wait(); }

  at::Tensor host_buffer(std::size_t n) override { return at::empty({static_cast<int64_t>(n)}, at::kFloat); }

  double run_compute(const std::function<void()>& work) override {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  void drain() {
    for (;;) {
      std::function<void()> next;
      {
        std::unique_lock<std::mutex> lock(queue_->mutex);
        queue_->changed.wait(lock, [&] { return queue_->stopping || !queue_->pending.empty(); });
        if (queue_->pending.empty()) return;  // stopping with nothing left
        next = std::move(queue_->pending.front());
        queue_->pending.pop_front();
      }
      std::exception_ptr error;
      try {
        if (before_copy_) before_copy_();
        next();
      } catch (...) {  // reported to whoever waits, as a CUDA error would be
        error = std::current_exception();
      }
      {
        std::lock_guard<std::mutex> lock(queue_->mutex);
        if (error && !queue_->error) queue_->error = error;
        ++queue_->finished;
      }
      queue_->changed.notify_all();
    }
  }

  std::shared_ptr<Queue> queue_;
  std::function<void()> before_copy_;
  std::thread thread_;
};

}  // namespace

std::unique_ptr<CopyEngine> make_host_thread_copy_engine(std::function<void()> before_copy) {
  return std::make_unique<HostThreadCopyEngine>(std::move(before_copy));
}

}  // namespace st::device
