#pragma once
// How one local worker's gradients reach host memory and its parameters
// come back, layer by layer (StellaTrain's GPU data path): on a GPU each
// layer's gradient is copied into a page-locked host buffer on a side stream
// as soon as autograd has written it, and the CPU stage that sums the layer
// waits for that copy alone (not for the device); updated parameters go back
// with host-to-device copies that the next forward waits for on the device.
// On the CPU the gradient already is in host memory and is read in place.
// Torch-light header.
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "core/device/compute_device.h"

namespace at {
class Tensor;
}

namespace st::device {

class CopyEngine;

class WorkerStaging {
 public:
  virtual ~WorkerStaging() = default;

  // Before a backward: no layer is staged yet.
  virtual void begin_backward() = 0;

  // From the gradient hook, on the thread running backward, right after
  // autograd has written `grad` (layer `layer`'s gradient).
  virtual void stage(std::size_t layer, const at::Tensor& grad) = 0;

  // The layer's gradient in host memory, after waiting for its copy alone;
  // nullptr when this backward staged no gradient for it. Valid until the
  // layer is staged again.
  virtual const float* host(std::size_t layer) = 0;

  // Starts copying values[l] into params[l] (on the worker's device) for
  // every layer; `values` may change once this returns.
  virtual void load(const std::vector<std::vector<float>>& values, const std::vector<at::Tensor>& params) = 0;

  // Runs forward or backward (`work`) on the worker's compute stream, after
  // the loads, and returns the device time it took in ms (CUDA events; wall
  // time on the CPU) once the device has finished it.
  virtual double run_compute(const std::function<void()>& work) = 0;
};

// Copies values[l] (host memory) into params[l] on whatever device it lives,
// outside autograd. Throws std::invalid_argument on a count mismatch.
void copy_to_parameters(const std::vector<std::vector<float>>& values, const std::vector<at::Tensor>& params);

// CPU: gradients are read in place from the parameters' .grad(), loads are
// plain copies, compute times are wall times (the engine as it always ran).
std::unique_ptr<WorkerStaging> make_direct_staging(const std::vector<at::Tensor>& params);

// Through a CopyEngine: one host buffer per layer (of `numels[l]` floats,
// taken once), a copy and a mark per staged layer, loads through host
// buffers of their own and a mark the next compute waits for.
std::unique_ptr<WorkerStaging> make_copy_staging(std::unique_ptr<CopyEngine> engine, const std::vector<std::size_t>& numels);

// The staging for worker `worker` of a node computing on `device`: direct on
// the CPU, a CUDA copy engine on the worker's GPU otherwise.
std::unique_ptr<WorkerStaging> make_worker_staging(const ComputeDevice& device, int worker,
                                                   const std::vector<at::Tensor>& params);

}  // namespace st::device
