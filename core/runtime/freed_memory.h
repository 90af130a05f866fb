#pragma once
// Where the program's freed memory goes: back to glibc's heap for the next
// allocation, or back to the kernel.
//
// glibc serves every block above its mmap threshold (dynamic, at most
// 32 MiB) with a fresh mmap and unmaps it when it is freed, and trims the
// heap's top once more than the trim threshold is free there. The real math
// allocates and frees blocks of that size every step (an evaluation batch's
// activations, a layer's gradient), so with glibc's settings each step
// first-touches fresh pages, which the kernel must fault in and zero. On
// the VMs this project runs on that cost a CNN run a third of its CPU time
// in the kernel and 2.5-3x its wall time (docs/engine.md, "Freed memory").
// Which memory a block comes from changes no result, only how fast it runs.
//
//   ST_MALLOC=keep    (default) the mmap and trim thresholds at 1 GiB: freed
//                     blocks stay in the heap and are reused
//   ST_MALLOC=glibc   glibc's own settings (GLIBC_TUNABLES applies)
#include <string>

namespace st::runtime {

// Applies ST_MALLOC's choice to this process; call early in main(). Child
// processes inherit the variable and apply it in their own main(). Says on
// stderr when glibc refuses the thresholds (the run goes on, slower). Throws
// std::invalid_argument for a value other than keep or glibc, naming it.
void apply_malloc_setting();

// The setting in force in this process ("keep", "glibc", "glibc (mallopt
// refused keep)" or "unsupported" where the C library is not glibc), for
// host_cost.json.
std::string malloc_setting();

}  // namespace st::runtime
