// The CUDA CopyEngine: a side stream per worker for device<->host copies,
// CUDA events for ordering and waiting, page-locked host buffers, and a
// compute stream of the worker's own (several workers may share one GPU and
// still overlap). Compiled only against a CUDA-enabled LibTorch
// (ST_CUDA_ENABLED in CMakeLists.txt). Uses the CUDA runtime's events
// directly rather than ATen's CUDAEvent, which pulls in cuBLAS/cuSPARSE headers.
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <stdexcept>

#include "core/device/copy_engine.h"
#include "core/device/cuda/cuda_check.h"

namespace st::device {
namespace {

using cuda::check;

// One CUDA event, created on its device with timing off (cheaper) unless asked.
class Event {
 public:
  Event(int device, bool timing) : device_(device) {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
    check(cudaEventCreateWithFlags(&event_, timing ? cudaEventDefault : cudaEventDisableTiming), "event create");
  }
  ~Event() {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
    cudaEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream) { check(cudaEventRecord(event_, stream), "event record"); }
  cudaEvent_t get() const { return event_; }

 private:
  int device_;
  cudaEvent_t event_ = nullptr;
};

class CudaMark final : public CopyMark {
 public:
  CudaMark(int device, cudaStream_t stream) : event_(device, false) { event_.record(stream); }
  void wait() const override { check(cudaEventSynchronize(event_.get()), "event synchronize"); }
  bool ready() const override {
    const cudaError_t status = cudaEventQuery(event_.get());
    if (status == cudaErrorNotReady) return false;
    check(status, "event query");
    return true;
  }
  cudaEvent_t get() const { return event_.get(); }

 private:
  Event event_;
};

class CudaCopyEngine final : public CopyEngine {
 public:
  explicit CudaCopyEngine(int device)
      : device_(device),
        copy_stream_(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device))),
        compute_stream_(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(device))),
        computed_(device, false) {}

  void follow_compute() override {
    // The calling thread's current stream on this device: from a gradient
    // hook, the stream autograd ran that parameter's accumulation on (its
    // device thread sets it); elsewhere, the thread's own. Loads between
    // steps rely on run_compute having waited for the device already.
    const auto current = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_));
    computed_.record(current.stream());
    check(cudaStreamWaitEvent(copy_stream_.stream(), computed_.get(), 0), "stream wait");
  }

  void copy(const at::Tensor& src, const at::Tensor& dst) override {
    if (src.numel() != dst.numel())
      throw std::invalid_argument(fmt::format("CUDA copy engine: copying {} elements into {}", src.numel(), dst.numel()));
    c10::cuda::CUDAStreamGuard guard(copy_stream_);
    dst.view(-1).copy_(src.reshape(-1), /*non_blocking=*/true);
    // The caching allocator must not hand the device tensor's memory to
    // someone else before this stream has read (or written) it.
    if (src.is_cuda()) src.record_stream(copy_stream_);
    if (dst.is_cuda()) dst.record_stream(copy_stream_);
  }

  std::shared_ptr<CopyMark> mark() override { return std::make_shared<CudaMark>(device_, copy_stream_.stream()); }

  void compute_waits(const CopyMark& mark) override {
    const auto& cuda_mark = dynamic_cast<const CudaMark&>(mark);
    const auto current = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_));
    check(cudaStreamWaitEvent(current.stream(), cuda_mark.get(), 0), "stream wait");
  }

  at::Tensor host_buffer(std::size_t n) override {
    return at::empty({static_cast<int64_t>(n)}, at::TensorOptions().dtype(at::kFloat).pinned_memory(true));
  }

  double run_compute(const std::function<void()>& work) override {
    c10::cuda::CUDAStreamGuard guard(compute_stream_);
    Event start(device_, true), end(device_, true);
    start.record(compute_stream_.stream());
    work();
    end.record(compute_stream_.stream());
    check(cudaEventSynchronize(end.get()), "event synchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start.get(), end.get()), "elapsed time");
    return ms;
  }

 private:
  int device_;
  c10::cuda::CUDAStream copy_stream_;
  c10::cuda::CUDAStream compute_stream_;
  Event computed_;  // recorded on the compute stream by follow_compute
};

}  // namespace

std::unique_ptr<CopyEngine> make_cuda_copy_engine(int index) { return std::make_unique<CudaCopyEngine>(index); }

}  // namespace st::device
