#include "core/device/event_clock.h"

#include <chrono>
#include <mutex>

namespace st::device {

std::unique_ptr<EventClock> make_cuda_event_clock(int index);  // cuda/ (or its CPU-only refusal)
void synchronize_cuda(int index);

namespace {

class SteadyEventClock final : public EventClock {
 public:
  void start() override {
    std::lock_guard<std::mutex> lock(mutex_);
    started_ = Clock::now();
    std::fill(marks_.begin(), marks_.end(), -1.0);
  }
  void mark(std::size_t i) override {
    const double ms = since_start();
    std::lock_guard<std::mutex> lock(mutex_);
    if (marks_.size() <= i) marks_.resize(i + 1, -1.0);
    marks_[i] = ms;
  }
  Times finish() override {
    const double end = since_start();
    std::lock_guard<std::mutex> lock(mutex_);
    return {marks_, end};
  }

 private:
  using Clock = std::chrono::steady_clock;
  double since_start() const { return std::chrono::duration<double, std::milli>(Clock::now() - started_).count(); }
  std::mutex mutex_;
  Clock::time_point started_ = Clock::now();
  std::vector<double> marks_;
};

}  // namespace

std::unique_ptr<EventClock> make_event_clock(const ComputeDevice& device, int index) {
  if (!device.is_cuda()) return std::make_unique<SteadyEventClock>();
  return make_cuda_event_clock(index);
}

void synchronize(const ComputeDevice& device, int index) {
  if (device.is_cuda()) synchronize_cuda(index);
}

}  // namespace st::device
