#pragma once
// The Executor/Clock seam (docs/architecture.md): engine code never creates threads,
// sleeps or reads the wall clock itself; it posts tasks here. The thread-pool
// executor runs them on real threads against the steady clock; the ns-3
// backend (sim/) runs them inside the simulator's event loop in virtual time.
//
// Tasks may run concurrently on several workers (real executor): engine state
// shared between tasks needs its own locking. Nothing may block inside a
// task; waiting is expressed by posting a continuation.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace st::runtime {

using Nanos = std::chrono::nanoseconds;
using Task = std::function<void()>;

// Every kind of compute task the engine runs; compute-time models (sim/)
// price each, and their tables are keyed by it. `work` in ComputeCost is
// measured in the unit each kind names.
enum class TaskKind {
  kForward,        // samples, on a worker's device
  kBackward,       // samples, on a worker's device
  kGather,         // elements summed or copied on the node's CPU
  kCopy,           // elements copied out of the node's master parameters
  kView,           // elements read through the master's view (extrapolated)
  kLoad,           // elements loaded into one replica (host copy, then
                   // host-to-device where the replica lives on a GPU)
  kCompress,       // elements scanned by a CPU compressor
  kCompressGpu,    // elements scanned by top-k on the device (topk-sync)
  kOptimize,       // indices a sparse CPU step touches
  kOptimizeDense,  // elements of a dense step on the device
  kPowerSgd,       // bytes PowerSGD moves through device memory
  kEvaluate,       // test samples (a measurement of the run, not part of it)
};
inline constexpr int kTaskKinds = 12;

// "forward", "compress_gpu", ...: the names timelines and profiles use.
const char* to_string(TaskKind kind);

// What a compute task is, for compute-time models (sim/): the real executor
// ignores it and simply runs the work.
struct ComputeCost {
  TaskKind kind = TaskKind::kForward;
  int layer = -1;    // -1: whole model
  double work = 0;   // in the kind's unit (TaskKind)
  int node = -1;     // the engine node charged (-1: not tied to one)
  int device = -1;   // that node's worker/GPU index; -1: the node's CPU
  // kCompress: the density the compressor keeps (its cost grows with the
  // output it writes); 0 for every other kind.
  double density = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;

  // Time since the executor started: wall time or virtual time.
  virtual Nanos now() const = 0;

  // Runs the task as soon as a worker is free.
  virtual void post(Task task) = 0;

  // Runs the task once `delay` has passed on this executor's clock.
  virtual void post_after(Nanos delay, Task task) = 0;

  // Runs `work` (real computation), charges it `cost` on this executor's
  // clock, then runs `done`. The real executor charges the wall time the work
  // took; the simulated one charges what its compute-time model says.
  virtual void compute(Task work, ComputeCost cost, Task done) = 0;

  // Called from inside the `work` of a compute task: `task` runs once that
  // work has reached progress mark `mark` (for a backward: parameter `mark`'s
  // gradient exists) on this executor's clock. The real executor posts it at
  // once, since the work really is that far; the simulated one runs it at the
  // task's start plus the compute-time model's share of the charged time for
  // that mark, so a layer's gradient leaves a simulated backward at its own
  // virtual time. Called outside compute work it behaves like post().
  virtual void post_progress(int mark, Task task) = 0;

  // Drives the executor from the calling (top-level) thread until
  // `finished()` is true, checking it after every task. Throws the first
  // exception a task threw. Call from outside any task only.
  virtual void run_until(const std::function<bool()>& finished) = 0;

  virtual int workers() const = 0;
};

// A pool of `workers` threads on the steady clock.
std::unique_ptr<Executor> make_thread_pool_executor(int workers);

}  // namespace st::runtime
