#pragma once
// TorchScript models of one's own (docs/byo.md): a module saved from Python
// with torch.jit.script or torch.jit.trace, trained by every system like a
// zoo model. Torch-free header; the implementation is
// core/model/torchscript_model.cc.
//
// What a file may say of itself: an extra file "stellatrain.json" (saved
// with torch.jit.save(module, FILE, _extra_files={"stellatrain.json":
// ...})) holding {"input": [C, H, W], "classes": N, "forward_flops": F};
// every key is optional, and a scenario's own values win.
#include <string>
#include <vector>

#include "core/model/flops.h"
#include "core/model/model.h"
#include "core/model/model_spec.h"

namespace st::model {

// `spec` with what its file says of itself filled in where the spec is
// silent. Throws std::invalid_argument naming the file (missing, not
// TorchScript, a malformed stellatrain.json).
ModelSpec with_file_metadata(const ModelSpec& spec);

// A replica of the file's module (each call its own deep copy, from one
// load per process: a file that changes afterwards is an error, so every
// replica of a run comes from the file its manifest fingerprints). Checks,
// naming the file: every parameter float32, contiguous and trainable; the
// spec's input and classes against `shape`; one forward of [2, C, H, W]
// gives a tensor [2, classes]. Every forward runs with the JIT's graph
// optimiser off (on the thread that runs it), so autograd runs op by op and
// each parameter's gradient is ready when its layer's backward ends (as in
// the zoo), and results do not depend on the profiling executor's passes.
Model load_torchscript_model(const ModelSpec& spec, const ModelShape& shape);

// Forward FLOPs per sample, per parameter in registration order, measured
// from one forward: convolutions and matrix products (2 x multiply-adds,
// as core/model/flops.h counts the zoo) are charged to the parameter they
// read; products that read none (attention's) to the last parameter
// charged. With spec.forward_flops set, the measured shares are scaled to
// that total (or, if nothing was measured, the total is spread over the
// parameters in proportion to their sizes).
std::vector<ParameterFlops> torchscript_parameter_flops(const ModelSpec& spec, const ModelShape& shape);

}  // namespace st::model
