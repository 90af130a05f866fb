#include "core/runtime/stop_request.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace st::runtime {
namespace {

// Lock-free, so a signal handler may store into it.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need a lock-free flag");
std::atomic<int> g_mode{static_cast<int>(StopOnSignals::SecondSignal::kExitAtOnce)};

constexpr int kHandled[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCount = 3;

void say(const char* text, std::size_t size) {
  const ssize_t ignored = write(STDERR_FILENO, text, size);
  (void)ignored;
}

// Only async-signal-safe calls here: write(2), _exit(2) and lock-free atomics.
void on_signal(int signal) {
  int none = 0;
  if (g_stop.compare_exchange_strong(none, signal)) {
    static const char kFirst[] =
        "\nstellatrain: stopping after the current step (results so far are kept); send it again to exit at once\n";
    static const char kFirstCleanup[] =
        "\nstellatrain: stopping the run and removing what it set up (results so far are kept)\n";
    if (g_mode.load() == static_cast<int>(StopOnSignals::SecondSignal::kWaitForCleanup)) {
      say(kFirstCleanup, sizeof(kFirstCleanup) - 1);
    } else {
      say(kFirst, sizeof(kFirst) - 1);
    }
    return;
  }
  if (g_mode.load() == static_cast<int>(StopOnSignals::SecondSignal::kExitAtOnce)) _exit(128 + signal);
  static const char kStill[] = "\nstellatrain: still removing what the run set up; it exits once that is done\n";
  say(kStill, sizeof(kStill) - 1);
}

}  // namespace

struct StopOnSignals::Saved {
  struct sigaction previous[kCount];
};

void request_stop(int signal) {
  int none = 0;
  g_stop.compare_exchange_strong(none, signal);
}
int stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void clear_stop_request() { g_stop.store(0, std::memory_order_relaxed); }

StopOnSignals::StopOnSignals(SecondSignal second)
    : previous_mode_(static_cast<SecondSignal>(g_mode.exchange(static_cast<int>(second)))), saved_(std::make_unique<Saved>()) {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < kCount; ++i) sigaction(kHandled[i], &action, &saved_->previous[i]);
}

StopOnSignals::~StopOnSignals() {
  for (int i = 0; i < kCount; ++i) sigaction(kHandled[i], &saved_->previous[i], nullptr);
  g_mode.store(static_cast<int>(previous_mode_));
}

}  // namespace st::runtime
