// A CUDA device's name, for manifests (core/device/host_description.h).
// Compiled only against a CUDA-enabled LibTorch.
#include <cuda_runtime_api.h>

#include <string>

#include "core/device/compute_device.h"
#include "core/device/cuda/cuda_check.h"

namespace st::device {

std::string cuda_device_name(int index) {
  cudaDeviceProp properties{};
  cuda::check(cudaGetDeviceProperties(&properties, index), "cudaGetDeviceProperties");
  return properties.name;
}

}  // namespace st::device
