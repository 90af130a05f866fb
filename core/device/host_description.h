#pragma once
// What a run ran on, for its manifest.json: the CPU's model and hardware
// threads, and, where the workers compute on CUDA, the name of each GPU
// they use. Results depend on these: a GPU's convolutions do not add in a
// fixed order, so two GPUs (or two runs on one) train apart
// (docs/paper-tta-resnet18.md, "Reading these rows"); the CPU's kernels are
// pinned (core/model/math_kernels.h) but its speed is what wall-clock
// backends measure. A comparison that pairs runs from two machines can
// then say so from the files alone.
#include <nlohmann/json.hpp>

#include <string>

#include "core/device/compute_device.h"

namespace st::device {

// The first "model name" of text in /proc/cpuinfo's format; "" when it has
// none (some architectures name the CPU under other keys).
std::string cpu_model_from(const std::string& cpuinfo);

// {"cpu": model or "unknown", "hardware_threads": N} and, for a CUDA
// compute device, "gpus": {"cuda:I": name} for each device index that local
// workers 0..local_workers-1 use (cuda_index_for_worker).
nlohmann::json host_description(const ComputeDevice& device, int local_workers);

}  // namespace st::device
