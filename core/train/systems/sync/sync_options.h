#pragma once
// Options of the synchronous family (docs/systems.md): topk-sync's density
// and ddp-powersgd's PowerSGD settings. ddp and ddp-fp16 have none.
#include "core/train/system_options.h"

namespace st::train {

struct TopkSyncOptions final : OptionsOf<TopkSyncOptions> {
  double density = 0.05;  // fraction of each layer's entries sent

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
  bool fix_density(double value) override {
    density = value;
    return true;
  }
};

// PowerSGD's rank r (PyTorch's matrix_approximation_rank defaults to 1, the
// paper's experiments use small ranks up to 4; 4 here, the accurate end),
// the iteration from which it compresses (plain DDP before, PyTorch's
// start_powerSGD_iter), error feedback and warm start (PyTorch's defaults:
// both on).
struct DdpPowerSgdOptions final : OptionsOf<DdpPowerSgdOptions> {
  int rank = 4;
  int start_iteration = 10;
  bool error_feedback = true;
  bool warm_start = true;

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
};

}  // namespace st::train
