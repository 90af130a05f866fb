#pragma once
// The systems whose clusters step on their own (local_step_system.h):
// local-sgd and cloudless-ma average models, cloudless-asgd-ga exchanges
// gradient accumulations.
#include "core/train/system_registry.h"

namespace st::train {

SystemDescriptor local_sgd_system();
SystemDescriptor cloudless_ma_system();
SystemDescriptor cloudless_asgd_ga_system();

}  // namespace st::train
