#pragma once
// StellaTrain's options (docs/systems.md, docs/convergence.md,
// docs/control.md): the density and compressor, staleness and how a stale
// forward is compensated, where momentum lives, the wire encoding, and the
// controller.
#include <optional>
#include <string>

#include "core/control/controller.h"
#include "core/train/system_options.h"
#include "core/train/systems/stellatrain/density_warmup.h"

namespace st::train {

struct StellaTrainOptions final : OptionsOf<StellaTrainOptions> {
  double density = 0.05;  // the fixed density, or the controller's first
  std::string compressor = "thresholdv16";  // thresholdv16, thresholdv, topk, randomk
  int staleness = 1;                        // 0 or 1
  // Staleness 1 (docs/convergence.md): "none"; "predict" (the forward uses
  // the parameters extrapolated over the updates it misses, from the
  // momentum buffer); "lookahead" (predict, plus this node's own compressed
  // gradient of the missing iteration in place of everyone's); "dc"
  // (delay-compensated gradients, DC-ASGD: g + dc_lambda x g x g x
  // (w_now - w_forward)).
  std::string compensation = "none";
  double dc_lambda = 0.04;
  bool fp16_values = false;  // wire encoding of values
  // The sparse SGD's treatment of entries a step does not list
  // (core/optim/sparse_optimizer.h, LazyMomentum): "decay" (the paper's
  // rule) or "exact" (dense momentum, deferred).
  std::string lazy_momentum = "decay";
  // Where momentum lives. "master": the CPU sparse SGD applies it to the
  // exchanged sparse gradient (the paper). "node": each node keeps a dense
  // velocity of its own gradient and compresses that (momentum correction,
  // as Deep Gradient Compression does); the master then applies plain SGD.
  // momentum_masking zeroes the velocity of the entries sent.
  std::string momentum_at = "master";
  bool momentum_masking = false;
  // Local gradient clipping (Deep Gradient Compression; core/compress/
  // compressors.h, GradientClipping): a node's summed gradient of each
  // tensor is scaled down to this L2 norm times the node's workers (the
  // mean of its workers' gradients to this norm) before error feedback
  // keeps it. 0: off.
  double clip_norm = 0;
  // Tensors of at most this many elements (norm layers' scales and shifts,
  // biases, a small first convolution) travel whole every iteration,
  // whatever the density: Deep Gradient Compression leaves such tensors
  // uncompressed, since they are a sliver of the bytes and a top-k keeps
  // one block of 16 of them at the paper's densities. 0: every tensor is
  // compressed (the paper).
  int dense_up_to = 0;
  // The first iterations' density, falling to the fixed or controller's
  // one (density_warmup.h); off by default.
  DensityWarmup warmup;
  // The controller re-picks the density (and, on unequal GPUs, the batch
  // split) from telemetry; `density` is then only the starting point. Off:
  // the fixed-density ablation. Scenarios and `train` turn it on.
  bool controller = false;
  control::ControllerOptions control;
  // The variant scenarios and `train` start from: "measured" (the best this
  // testbed measured: the controller, lookahead, fp16 values;
  // docs/convergence.md) or "paper" (the paper's rule: the controller, no
  // compensation of the stale forward, fp32 values). Options given beside
  // it override it.
  std::string preset;  // "" in code: the fields as set

  static std::vector<OptionField> make_fields();
  void use_command_defaults() override { apply_preset("measured"); }
  void apply_preset(const std::string& name);
  void validate(const TrainConfig& run) const override;
  void check_entry(const util::YamlField& entry) const override;
  bool fix_density(double value) override {
    density = value;
    controller = false;
    return true;
  }
  std::optional<ControlledSystem> controlled() const override;
  std::string cpu_compressor() const override { return compressor; }
};

}  // namespace st::train
