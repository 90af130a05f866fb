#pragma once
// The kernel rates behind a compute profile (`stellatrain bench profile`,
// profile_command.cc writes them; the sim's profile model reads them,
// sim/compute_model.cc): the CPU stages StellaTrain offloads, each
// compressor's selection at several densities, and on a GPU the dense step,
// exact top-k and the host-device copy rates. Medians over repetitions.
#include <string>
#include <utility>
#include <vector>

#include "apps/bench/median_timer.h"
#include "core/compress/compressor_names.h"

namespace st::device {
struct ComputeDevice;
}

namespace st::bench {

// The densities the compressors are timed at: the controller's range, from
// its floor to half the gradient.
inline constexpr double kCompressDensities[] = {0.001, 0.01, 0.05, 0.2, 0.5};

// (density, ns per scanned element), densities increasing.
using CompressCurve = std::vector<std::pair<double, double>>;

struct KernelNs {
  double gather = 0, copy = 0, view = 0, optimize_index = 0, optimize_dense = 0, topk = 0;
  CompressCurve compress;  // thresholdv16
  // compress::compressors_with_own_curves(), in order: timed beside
  // thresholdv16, whose curve is the profile's
  // `compress_ns_per_element_at_density` (the engine's default); these go to
  // `compress_ns_per_element_at_density_by_compressor`.
  std::vector<std::pair<std::string, CompressCurve>> other_compressors;
};

// Every CPU figure on this machine, and torch::topk on the CPU (`topk`,
// which stands in for the accelerator's on a CPU-only profile).
KernelNs time_kernels(const TimerOptions& timer);

// thresholdv16's curve and each of compress::compressors_with_own_curves()',
// timed one after the other on the same gradient (so their ratios are
// measured side by side).
struct CompressorCurves {
  CompressCurve thresholdv16;
  std::vector<std::pair<std::string, CompressCurve>> others;
};
CompressorCurves time_compressor_curves(const TimerOptions& timer);

// On a GPU: the dense SGD step (momentum, as torch's SGD) and exact top-k
// in device memory, per element.
struct DeviceKernelNs {
  double optimize_dense = 0, topk = 0;
};
DeviceKernelNs time_device_kernels(const TimerOptions& timer, const device::ComputeDevice& on);

// Device-to-host and host-to-device copy rates (GB/s) of page-locked buffers.
struct TransferGbps {
  double d2h = 0, h2d = 0;
};
TransferGbps time_transfers(const TimerOptions& timer, const device::ComputeDevice& on);

// The CUDA device index of `on` (0 on the CPU, where it is not used).
int device_index(const device::ComputeDevice& on);

}  // namespace st::bench
