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

// What a compute task is, for compute-time models (sim/): the real executor
// ignores it and simply runs the work.
struct ComputeCost {
  std::string kind;  // "forward", "backward", "gather", "compress", "optimize", "evaluate"
  int layer = -1;    // -1: whole model
  double work = 0;   // kind-specific size: samples (forward, backward), elements
                     // (gather, compress), touched indices (optimize)
  int node = -1;     // the engine node charged (-1: not tied to one)
  int device = -1;   // that node's worker/GPU index; -1: the node's CPU
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
