#pragma once
// SIGINT and SIGTERM for `stellatrain run` and `train` (not the emu
// backend, whose launcher has its own, emu/launcher.h): the first asks the
// training loop to stop at its next task boundary (core/runtime/stop_request.h),
// so finished results stay and the interrupted run is marked incomplete;
// a second one exits at once with 128 + signal.
#include <stdexcept>
#include <string>

namespace st::apps {

class InterruptHandlers {
 public:
  InterruptHandlers();   // clears any earlier stop request
  ~InterruptHandlers();  // restores the previous handlers
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

// Thrown by `run` and `train` once an interrupted run's results are saved;
// the command exits with 128 + signal.
class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error("interrupted by signal " + std::to_string(signal)), signal(signal) {}
  int signal;
};

}  // namespace st::apps
