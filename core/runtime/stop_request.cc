#include "core/runtime/stop_request.h"

#include <atomic>

namespace st::runtime {
namespace {

// Lock-free, so a signal handler may store into it.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need a lock-free flag");

}  // namespace

void request_stop(int signal) { g_stop.store(signal, std::memory_order_relaxed); }
int stop_requested() { return g_stop.load(std::memory_order_relaxed); }
void clear_stop_request() { g_stop.store(0, std::memory_order_relaxed); }

}  // namespace st::runtime
