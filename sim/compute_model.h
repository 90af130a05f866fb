#pragma once
// Compute-time models for the simulated executor (the Executor seam, docs/architecture.md) and the
// paced one that prices a real-time run (core/runtime/paced_executor.h): the
// real work always runs; a model decides how much time it costs.
//   measured  wall time of the real work on this machine x scale
//   profile   a YAML table per device: forward/backward ms per model and
//             batch, CPU and accelerator kernel rates (docs/sim.md)
//   analytic  FLOPs / device rate for forward and backward, bytes / memory
//             rate for the rest
// `profile` and `analytic` ignore the wall clock, so runs under them are
// deterministic. No ns-3 in here.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/runtime/compute_time_model.h"
#include "core/runtime/executor.h"

namespace st::sim {

struct ComputeModelConfig {
  std::string kind = "measured";  // measured, profile or analytic
  double scale = 1.0;             // measured: multiplies the wall time
  std::string profile_path;       // profile: a YAML file (scenarios/profiles/*.yaml)
  // The run's model and per-worker batch (from the training config); a
  // TorchScript model's file and declared FLOPs (model::ModelSpec).
  std::string model = "cnn";
  std::string model_file;
  double model_flops = 0;
  double batch = 64;
  // The compressor the run's system runs on the node CPU ("": none): a
  // profile with a curve of its own for it prices its compress tasks by
  // that curve, any other by thresholdv16's (and the manifest says which).
  std::string compressor;
  // analytic: rates of the modelled hardware.
  double device_tflops = 10.0;  // sustained forward/backward rate of one GPU
  double device_gbps = 500.0;   // GPU memory-bound kernels (dense step, GPU top-k)
  double cpu_gbps = 5.0;        // the node CPU's offloaded stages (gather, compress, sparse step)
  double h2d_gbps = 12.0;       // host-to-device copies into a GPU replica (PCIe 3.0 x16, page-locked)
  // The image shape, for FLOP counts (Fashion-MNIST by default).
  int64_t channels = 1, height = 28, width = 28, classes = 10;
  // Heterogeneous clusters: node n's own profile file (profile model) or
  // GPU rate (analytic model), in engine-node order; empty: every node as
  // above. Each node's tasks are priced by its own entry.
  std::vector<std::string> node_profiles;
  std::vector<double> node_tflops;
};

// The interface every model implements (core/runtime/compute_time_model.h),
// named here as the sim backend has always named it.
using runtime::ComputeTimeModel;

// True for the models that price the modelled hardware (profile, analytic)
// rather than this machine's wall time (measured): only they can price a
// timing run's skipped math, in virtual time or paced on the wall clock.
inline bool prices_modelled_hardware(const ComputeModelConfig& config) { return config.kind != "measured"; }

// Throws std::invalid_argument (bad kind or parameter) or std::runtime_error
// (an unreadable or malformed profile, naming the file and key).
std::unique_ptr<ComputeTimeModel> make_compute_model(const ComputeModelConfig& config);

}  // namespace st::sim
