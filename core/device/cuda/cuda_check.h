#pragma once
// The CUDA runtime's status codes as exceptions naming the call, for the
// CUDA sources of this folder (compiled only against a CUDA LibTorch).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <stdexcept>

namespace st::device::cuda {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(fmt::format("CUDA {}: {}", what, cudaGetErrorString(status)));
}

}  // namespace st::device::cuda
