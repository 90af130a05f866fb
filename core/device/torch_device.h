#pragma once
// The LibTorch device a worker of a compute device runs on (a light c10
// header, for the files that place tensors).
#include <c10/core/Device.h>

#include "core/device/compute_device.h"

namespace st::device {

// The CPU, or worker `worker`'s GPU among those visible (cuda_index_for_worker).
c10::Device torch_device(const ComputeDevice& device, int worker = 0);

}  // namespace st::device
