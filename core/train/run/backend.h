#pragma once
// A way of running a training: `real` (threads and sockets on the wall
// clock; real_backend.h), `sim` (every node inside one ns-3 simulation, in
// virtual time; sim/sim_backend.h) and `emu` (one process per node in Linux
// network namespaces over shaped links; emu/emu_backend.h). The commands
// pick one by name through one factory (apps/backends.h) and only ever see
// this interface; the engine runs unchanged on each.
#include <string>

#include "core/train/run/trainer.h"

namespace st::train {

struct TrainConfig;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // real, sim, emu
  // True when results are in simulated seconds (deterministic, so runs may
  // share the machine); false for the wall clock.
  virtual bool simulated() const = 0;
  // False for a backend without a network of its own to configure (real:
  // no links, no MTU).
  virtual bool has_network() const { return true; }
  // True when the backend prices compute by a compute-time model instead of
  // measuring it (sim; a real or emulated run paced by the scenario's
  // profile or analytic model): only such a backend can run a timing run,
  // whose skipped math only a model can price.
  virtual bool prices_compute() const { return simulated(); }
  // What a reader of summary.json should know about this backend's numbers
  // ("": nothing).
  virtual std::string summary_note() const { return ""; }
  // Throws std::invalid_argument naming the field when this backend cannot
  // run `config` (checked before anything is written).
  virtual void check(const TrainConfig& config) const;
  // What the host must allow before anything is written (the emulator needs
  // root); throws naming what is missing.
  virtual void check_host() const {}
  // True when an interrupted run still holds resources that must be
  // removed (namespaces, qdiscs): a second signal then waits for that
  // instead of exiting at once (core/runtime/stop_request.h).
  virtual bool cleans_up_after_interrupt() const { return false; }
  // One training to its end, its budget or a stop request
  // (TrainResult::interrupted_by); throws on errors, naming what failed.
  virtual TrainResult train(const TrainConfig& config) = 0;
};

}  // namespace st::train
