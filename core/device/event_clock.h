#pragma once
// Times points inside work issued to a compute device, on the device's own
// clock: CUDA events on a GPU (a host timestamp would only say when the
// work was queued), the steady clock on the CPU. `bench profile` times each
// parameter's gradient readiness inside backward with it. Torch-free header.
#include <memory>
#include <vector>

#include "core/device/compute_device.h"

namespace st::device {

class EventClock {
 public:
  virtual ~EventClock() = default;
  // Starts a measurement on the calling thread's current stream.
  virtual void start() = 0;
  // Records point `i` (growing the table as needed), from any thread whose
  // current stream carries the work (autograd's, inside a gradient hook).
  virtual void mark(std::size_t i) = 0;
  // Waits for the device and returns, per point, ms after start() (-1 for a
  // point not marked since start()), plus the time of the finish itself.
  struct Times {
    std::vector<double> marks_ms;
    double end_ms = 0;
  };
  virtual Times finish() = 0;
};

// The CPU clock, or CUDA events on `device`'s GPU (device index `index`).
std::unique_ptr<EventClock> make_event_clock(const ComputeDevice& device, int index = 0);

// Waits until the GPU has finished everything issued to it (no-op on the CPU).
void synchronize(const ComputeDevice& device, int index = 0);

}  // namespace st::device
