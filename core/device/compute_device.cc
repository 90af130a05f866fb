#include "core/device/compute_device.h"
#include "core/device/torch_device.h"

#include <fmt/format.h>
#include <torch/cuda.h>

#include <cstdlib>
#include <stdexcept>

namespace st::device {

std::string ComputeDevice::str() const {
  if (!is_cuda()) return "cpu";
  return index < 0 ? std::string("cuda") : fmt::format("cuda:{}", index);
}

ComputeDevice parse_compute_device(const std::string& text) {
  if (text == "cpu") return {};
  if (text == "cuda") return {ComputeDevice::Kind::kCuda, -1};
  const std::string prefix = "cuda:";
  if (text.compare(0, prefix.size(), prefix) == 0 && text.size() > prefix.size() && text.size() <= prefix.size() + 3) {
    const std::string digits = text.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos)
      return {ComputeDevice::Kind::kCuda, std::atoi(digits.c_str())};
  }
  throw std::invalid_argument(fmt::format("compute device '{}': expected cpu, cuda or cuda:N", text));
}

int cuda_index_for_worker(const ComputeDevice& device, int worker, int device_count) {
  if (!device.is_cuda()) throw std::invalid_argument("cuda_index_for_worker: the compute device is the CPU");
  if (device_count < 1) throw std::invalid_argument(fmt::format("compute device {}: no CUDA device is visible", device.str()));
  if (device.index < 0) return worker % device_count;
  if (device.index >= device_count)
    throw std::invalid_argument(
        fmt::format("compute device {}: only {} CUDA device(s) visible (0..{})", device.str(), device_count, device_count - 1));
  return device.index;
}

bool cuda_built() {
#ifdef ST_WITH_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() { return cuda_built() ? static_cast<int>(torch::cuda::device_count()) : 0; }

c10::Device torch_device(const ComputeDevice& device, int worker) {
  if (!device.is_cuda()) return c10::Device(c10::DeviceType::CPU);
  return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(cuda_index_for_worker(device, worker, cuda_device_count()))};
}

void require_available(const ComputeDevice& device) {
  if (!device.is_cuda()) return;
  if (!cuda_built())
    throw std::invalid_argument(fmt::format(
        "compute device {}: this build's LibTorch has no CUDA (build against a CUDA LibTorch: scripts/gpu/build.sh, docs/gpu.md)",
        device.str()));
  cuda_index_for_worker(device, 0, cuda_device_count());
}

}  // namespace st::device
