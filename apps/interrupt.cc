#include "apps/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "core/runtime/stop_request.h"

namespace st::apps {
namespace {

constexpr int kHandled[] = {SIGINT, SIGTERM};
struct sigaction g_previous[2];

// Only async-signal-safe calls here: write(2), _exit(2) and a lock-free store.
void on_signal(int signal) {
  if (runtime::stop_requested() != 0) _exit(128 + signal);
  runtime::request_stop(signal);
  static const char kMessage[] =
      "\nstellatrain: stopping after the current step (results so far are kept); send it again to exit at once\n";
  const ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof(kMessage) - 1);
  (void)ignored;
}

}  // namespace

InterruptHandlers::InterruptHandlers() {
  runtime::clear_stop_request();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 2; ++i) sigaction(kHandled[i], &action, &g_previous[i]);
}

InterruptHandlers::~InterruptHandlers() {
  for (int i = 0; i < 2; ++i) sigaction(kHandled[i], &g_previous[i], nullptr);
}

}  // namespace st::apps
