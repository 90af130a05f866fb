#include "core/runtime/executor.h"

namespace st::runtime {

const char* to_string(TaskKind kind) {
  switch (kind) {
    case TaskKind::kForward: return "forward";
    case TaskKind::kBackward: return "backward";
    case TaskKind::kGather: return "gather";
    case TaskKind::kCopy: return "copy";
    case TaskKind::kView: return "view";
    case TaskKind::kLoad: return "load";
    case TaskKind::kCompress: return "compress";
    case TaskKind::kCompressGpu: return "compress_gpu";
    case TaskKind::kOptimize: return "optimize";
    case TaskKind::kOptimizeDense: return "optimize_dense";
    case TaskKind::kPowerSgd: return "powersgd";
    case TaskKind::kEvaluate: return "evaluate";
  }
  return "unknown";
}

}  // namespace st::runtime
