#pragma once
// Where a node's local workers run forward and backward: the CPU (as on
// the build machine) or a CUDA device. Parsed from a scenario's
// `compute_device:` or `train --compute-device`; torch-free header.
#include <string>

namespace st::device {

struct ComputeDevice {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  // CUDA only: the device every worker uses; -1 spreads a node's workers
  // over the visible devices round-robin (several workers may share one).
  int index = -1;

  bool is_cuda() const { return kind == Kind::kCuda; }
  std::string str() const;  // "cpu", "cuda", "cuda:1"
};

// "cpu", "cuda" or "cuda:N". Throws std::invalid_argument quoting `text`.
ComputeDevice parse_compute_device(const std::string& text);

// The CUDA device index worker `worker` uses when `device_count` are
// visible. Throws std::invalid_argument when there are none or the named
// index is not among them.
int cuda_index_for_worker(const ComputeDevice& device, int worker, int device_count);

// Whether this build's LibTorch has CUDA (Debian's libtorch-dev has not).
bool cuda_built();

// CUDA devices LibTorch sees now (0 without CUDA).
int cuda_device_count();

// The name the CUDA runtime gives device `index` (e.g. "NVIDIA H100 80GB
// HBM3"); throws std::invalid_argument on a build without CUDA and
// std::runtime_error naming the call when the runtime fails.
std::string cuda_device_name(int index);

// Throws std::invalid_argument saying what is missing when `device` cannot
// be used here: a CPU-only build, or no (or too few) CUDA devices.
void require_available(const ComputeDevice& device);

}  // namespace st::device
