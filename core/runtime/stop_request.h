#pragma once
// A process-wide request that long work stop early, made from a signal
// handler (apps/interrupt.h installs them for `stellatrain run` and
// `train`): the training loop checks it between tasks and ends the run
// where it is (core/train/trainer.cc). Setting it is async-signal-safe.
namespace st::runtime {

void request_stop(int signal);  // async-signal-safe
int stop_requested();           // 0: none; otherwise the signal that asked
void clear_stop_request();

}  // namespace st::runtime
