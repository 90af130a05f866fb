#pragma once
// The launcher's threads that stand in for the kernel's network timers (the
// NFQUEUE delay lines, the trace replay) run at the lowest real-time
// priority, as a qdisc's timer runs ahead of every process: at the normal
// policy they queue behind the nodes' training compute on a busy host and
// act late (docs/emu.md measures the delay line both ways). They sleep
// almost all the time, and the kernel's real-time throttling caps them in
// any case. Without the privilege (the emulator runs as root, so never) a
// thread keeps the normal policy, and its lateness still shows in the
// manifest.
#include <pthread.h>
#include <sched.h>

namespace st::emu {

inline void run_ahead_of_processes() {
  sched_param param{};
  param.sched_priority = sched_get_priority_min(SCHED_FIFO);
  pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

}  // namespace st::emu
