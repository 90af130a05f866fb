#pragma once
// ddp-gloo: the real PyTorch c10d stack (Reducer over ProcessGroupGloo;
// gloo_training.h, docs/ddp-gloo.md), with its option, c10d's
// communication hook.
#include <string>

#include "core/train/system_options.h"
#include "core/train/system_registry.h"

namespace st::train {

struct DdpGlooOptions final : OptionsOf<DdpGlooOptions> {
  // "none", or "fp16" for c10d's builtin FP16_COMPRESS hook on the Reducer
  // (one local worker per process).
  std::string comm_hook = "none";

  static std::vector<OptionField> make_fields();
  void validate(const TrainConfig& run) const override;
};

SystemDescriptor ddp_gloo_system();

}  // namespace st::train
