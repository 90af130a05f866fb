#include "core/train/system.h"

namespace st::train {

void record_local_times(IterationRecord& record, const LocalStepTimes& times) {
  record.forward_ms = times.forward_ms;
  record.backward_ms = times.backward_ms;
  record.device_forward_ms = times.device_forward_ms;
  record.device_backward_ms = times.device_backward_ms;
  record.gather_ms = times.gather_ms;
  record.loss = times.loss;
  record.batch = times.batch;
}

}  // namespace st::train

namespace st::train::detail {

double ms_since(runtime::Executor& executor, runtime::Nanos start) {
  return std::chrono::duration<double, std::milli>(executor.now() - start).count();
}

}  // namespace st::train::detail
