// EventClock on CUDA events: start and each mark are events recorded on the
// calling thread's current stream; finish synchronises the last one and
// reads the elapsed times. Compiled only against a CUDA-enabled LibTorch.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "core/device/cuda/cuda_check.h"
#include "core/device/event_clock.h"

namespace st::device {
namespace {

using cuda::check;

class CudaEventClock final : public EventClock {
 public:
  explicit CudaEventClock(int device) : device_(device) { start_ = create(); }
  ~CudaEventClock() override {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
    cudaEventDestroy(start_);
    for (auto& e : marks_) cudaEventDestroy(e.event);
  }

  void start() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& e : marks_) e.recorded = false;
    check(cudaEventRecord(start_, current()), "event record");
  }

  void mark(std::size_t i) override {
    std::lock_guard<std::mutex> lock(mutex_);
    while (marks_.size() <= i) marks_.push_back({create(), false});
    check(cudaEventRecord(marks_[i].event, current()), "event record");
    marks_[i].recorded = true;
  }

  Times finish() override {
    std::lock_guard<std::mutex> lock(mutex_);
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));  // cudaDeviceSynchronize acts on the current device
    cudaEvent_t end = create();
    check(cudaEventRecord(end, current()), "event record");
    check(cudaDeviceSynchronize(), "device synchronize");  // marks may sit on other streams
    Times out;
    for (const auto& e : marks_) out.marks_ms.push_back(e.recorded ? elapsed(e.event) : -1.0);
    out.end_ms = elapsed(end);
    cudaEventDestroy(end);
    return out;
  }

 private:
  struct Mark {
    cudaEvent_t event;
    bool recorded;
  };
  cudaEvent_t create() const {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
    cudaEvent_t e = nullptr;
    check(cudaEventCreate(&e), "event create");
    return e;
  }
  cudaStream_t current() const {
    return c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_)).stream();
  }
  double elapsed(cudaEvent_t e) const {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, e), "elapsed time");
    return ms;
  }

  int device_;
  std::mutex mutex_;
  cudaEvent_t start_ = nullptr;
  std::vector<Mark> marks_;
};

}  // namespace

std::unique_ptr<EventClock> make_cuda_event_clock(int index) { return std::make_unique<CudaEventClock>(index); }

void synchronize_cuda(int index) {
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
  check(cudaDeviceSynchronize(), "device synchronize");
}

}  // namespace st::device
