#pragma once
// The synchronous family (sync_system.h): ddp, topk-sync, and DDP with
// PyTorch's communication hooks, ddp-fp16 and ddp-powersgd.
#include "core/train/system_registry.h"

namespace st::train {

SystemDescriptor ddp_system();
SystemDescriptor topk_sync_system();
SystemDescriptor ddp_fp16_system();
SystemDescriptor ddp_powersgd_system();

}  // namespace st::train
