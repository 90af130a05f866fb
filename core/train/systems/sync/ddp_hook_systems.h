#pragma once
// ddp-fp16 and ddp-powersgd: DDP with PyTorch's fp16_compress_hook and
// powerSGD_hook (ddp_hook_systems.cc, docs/systems.md; their descriptors
// are in sync_systems.h).
#include <memory>

#include "core/collective/ring_allreduce.h"
#include "core/train/system.h"

namespace st::train {

// ddp-fp16's ring: halves on the wire, each node's bucket divided by the
// number of workers (over every node) first.
collective::AllreduceOptions fp16_compress_hook_options(const TrainConfig& config);

}  // namespace st::train
