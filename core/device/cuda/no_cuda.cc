// The CUDA parts (copy engine, event clock) on a CPU-only LibTorch
// (Debian's): there is no CUDA to use. compute_device.cc refuses a CUDA compute device earlier,
// with the reason; this only guards a direct call.
#include <stdexcept>
#include <string>

#include "core/device/copy_engine.h"
#include "core/device/event_clock.h"

namespace st::device {

std::unique_ptr<CopyEngine> make_cuda_copy_engine(int index) {
  throw std::invalid_argument("CUDA device " + std::to_string(index) +
                              ": this build's LibTorch has no CUDA (scripts/gpu/build.sh builds against one)");
}

}  // namespace st::device

namespace st::device {

std::unique_ptr<EventClock> make_cuda_event_clock(int index) {
  throw std::invalid_argument("CUDA event clock on device " + std::to_string(index) +
                              ": this build's LibTorch has no CUDA");
}

void synchronize_cuda(int index) {
  throw std::invalid_argument("synchronize CUDA device " + std::to_string(index) + ": this build's LibTorch has no CUDA");
}

std::string cuda_device_name(int index) {
  throw std::invalid_argument("name of CUDA device " + std::to_string(index) + ": this build's LibTorch has no CUDA");
}

}  // namespace st::device
