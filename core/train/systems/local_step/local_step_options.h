#pragma once
// Options of the systems whose clusters step on their own (docs/systems.md):
// local-sgd, cloudless-ma and cloudless-asgd-ga.
#include "core/train/system_options.h"

namespace st::train {

struct LocalSgdOptions final : OptionsOf<LocalSgdOptions> {
  int averaging_period = 8;  // iterations between model averages
  // Iterations of plain DDP (global gradient allreduce) before the local
  // steps start (PyTorch's post-local SGD warmup).
  int start_iteration = 0;

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
};

struct CloudlessMaOptions final : OptionsOf<CloudlessMaOptions> {
  // Every `averaging_period` iterations, or, with averaging_period_s > 0,
  // about every that many seconds (converted to iterations from the slowest
  // node's mean iteration time at each round; the first round still falls
  // due after averaging_period iterations).
  int averaging_period = 8;
  double averaging_period_s = 0;
  // True: a round runs while the cluster keeps training and is applied as
  // (average - snapshot) when it lands; periods that pass while it is in
  // flight are skipped. False: training waits for it.
  bool overlap = true;

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
};

// Each cluster sends its gradients accumulated over accumulation_steps
// iterations to the others; a step waits only for peers' accumulations
// that ended max_staleness or more iterations ago.
struct CloudlessAsgdOptions final : OptionsOf<CloudlessAsgdOptions> {
  int accumulation_steps = 4;
  int max_staleness = 8;

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
};

}  // namespace st::train
