#pragma once
// A process-wide request that long work stop early, and the one way signals
// make it: StopOnSignals turns SIGINT, SIGTERM and SIGHUP into a stop
// request for every command (`run`, `train`, `sweep`, `emu up`) and every
// backend. The training loop checks it between tasks and ends the run where
// it is (core/train/run/trainer.cc); the emulator's launcher checks it
// between polls and stops its node processes (emu/launcher.h). Setting it
// is async-signal-safe.
#include <memory>

namespace st::runtime {

void request_stop(int signal);  // async-signal-safe; the first signal is kept
int stop_requested();           // 0: none; otherwise the signal that asked
void clear_stop_request();

// While it lives, SIGINT, SIGTERM and SIGHUP request a stop (the first one
// is kept) instead of ending the process; the handlers it replaced come back
// when it goes. Nested ones are fine (the innermost decides what a second
// signal does). It does not clear an earlier request.
class StopOnSignals {
 public:
  enum class SecondSignal {
    kExitAtOnce,      // exit with 128 + signal: nothing is left to clean up
    kWaitForCleanup,  // ignored: resources (namespaces, qdiscs) are being removed
  };
  explicit StopOnSignals(SecondSignal second = SecondSignal::kExitAtOnce);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  SecondSignal previous_mode_;
  struct Saved;  // the handlers it replaced
  std::unique_ptr<Saved> saved_;
};

}  // namespace st::runtime
