#pragma once
// How an interrupted command ends. Signals become a stop request for every
// command and backend in one way (runtime::StopOnSignals,
// core/runtime/stop_request.h); once the interrupted run's results are
// saved, `run` and `train` throw Interrupted and exit with 128 + signal.
#include <stdexcept>
#include <string>

namespace st::apps {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal)
      : std::runtime_error("interrupted by signal " + std::to_string(signal)), signal(signal) {}
  int signal;
};

}  // namespace st::apps
