#pragma once
// An ordered queue of copies between device and host memory beside a
// worker's computation: CUDA's side stream plus events, behind an interface
// the staging logic (core/device/staging.h) is written against, so that the
// same logic runs and is tested on a CPU-only build with the host-thread
// stand-in below. Torch-light header (tensors are only declared).
#include <cstddef>
#include <functional>
#include <memory>

namespace at {
class Tensor;
}

namespace st::device {

// Completes when every copy enqueued before it has.
class CopyMark {
 public:
  virtual ~CopyMark() = default;
  virtual void wait() const = 0;    // blocks the calling thread (CUDA: event synchronize)
  virtual bool ready() const = 0;   // does not block
};

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;

  // Copies enqueued from now on start only after the compute work issued so
  // far on the calling thread's compute stream (a gradient's copy must not
  // overtake the kernel that writes it). CPU compute is synchronous: no-op.
  virtual void follow_compute() = 0;

  // Enqueues dst.copy_(src) (same number of elements); returns at once.
  virtual void copy(const at::Tensor& src, const at::Tensor& dst) = 0;

  // A mark after everything enqueued so far.
  virtual std::shared_ptr<CopyMark> mark() = 0;

  // The calling thread's compute stream runs its later work only after
  // `mark` (parameters loaded before the forward that reads them).
  virtual void compute_waits(const CopyMark& mark) = 0;

  // A host buffer of n floats that copies to and from the device are fast
  // for (page-locked on CUDA).
  virtual at::Tensor host_buffer(std::size_t n) = 0;

  // Runs `work` with this worker's compute stream current and returns once
  // the device has finished it, with the device time it took in ms (CUDA
  // events) or the wall time on the CPU.
  virtual double run_compute(const std::function<void()>& work) = 0;
};

// The CPU stand-in: copies run in order on a thread of their own, marks are
// completion points in that order, compute runs inline. `before_copy` (for
// tests) runs on the copy thread before each copy.
std::unique_ptr<CopyEngine> make_host_thread_copy_engine(std::function<void()> before_copy = {});

// A side stream and events on CUDA device `index` (core/device/cuda/);
// throws std::invalid_argument on a build without CUDA.
std::unique_ptr<CopyEngine> make_cuda_copy_engine(int index);

}  // namespace st::device
