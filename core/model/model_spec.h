#pragma once
// Which model a run trains: a member of the zoo by name, or a TorchScript
// file of one's own (docs/byo.md). Torch-free: TrainConfig and the
// simulator's compute models carry it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace st::model {

struct ModelSpec {
  // A zoo model (model_names()), or what a TorchScript model is called in
  // profiles, manifests and logs.
  std::string name = "cnn";
  // A module saved from Python with torch.jit.script(...).save(FILE) or
  // torch.jit.trace(...).save(FILE); empty: the zoo's `name`.
  std::string torchscript;
  // Forward FLOPs per sample, for the `analytic` compute model and the
  // per-layer shares of backward; 0: measured from one forward of the file
  // (core/model/torchscript_model.h).
  double forward_flops = 0;
  // What the model takes and gives, when the scenario or the file says
  // ([channels, height, width]; 0 classes: unsaid): checked against the
  // dataset's images when the model is built.
  std::vector<int64_t> input;
  int64_t classes = 0;

  bool is_torchscript() const { return !torchscript.empty(); }
};

// A zoo model's spec.
inline ModelSpec zoo_model(std::string name) {
  ModelSpec spec;
  spec.name = std::move(name);
  return spec;
}

}  // namespace st::model
