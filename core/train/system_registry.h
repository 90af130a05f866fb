#pragma once
// Every system a run may name, each described once: its options, how to
// build it on a node, and what it asks of the run. Scenario parsing,
// `train` flags, sweeps, manifests and summaries loop over this registry;
// nothing else compares a system's name with a string. The built-in
// systems are listed in system_registry.cc (one line each); a test or a
// plug-in adds its own with register_system.
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/train/system_options.h"

namespace st::data {
class Dataset;
}

namespace st::train {

class System;
class ResultsWriter;
struct NodeContext;
struct TrainConfig;
struct TrainResult;

struct SystemDescriptor {
  std::string name;     // as scenarios and `train --system` name it
  std::string summary;  // one line (docs/systems.md has the whole story)
  // The options as the engine defaults them (SystemOptions::
  // use_command_defaults adds what scenarios and `train` start from).
  std::function<std::unique_ptr<SystemOptions>()> make_options;
  // The system on one node of the engine (in-process or TCP transport,
  // real or simulated clock). Null for a system that runs outside the
  // engine's nodes (run_own).
  std::function<std::unique_ptr<System>(NodeContext&)> make;
  // A system that brings its own process group instead of the engine's
  // transport (ddp-gloo: c10d's Gloo and Reducer): it trains the whole run.
  std::function<TrainResult(const TrainConfig&, const data::Dataset& train, const data::Dataset& test,
                            ResultsWriter& results)>
      run_own;
  // Only on real networks (the real and emu backends): not simulated, no
  // timing mode.
  bool real_network_only = false;
  // What to run instead on a simulated network, for the error message
  // (e.g. "ddp: the same ring algorithm on the engine's transport").
  std::string simulated_stand_in;
  // The baseline that summaries divide by (speedup_vs_<name>).
  bool speedup_reference = false;
  // Runs its CPU stages on layer samples in timing mode (TrainConfig::
  // stage_sample, node/layer_sampling.h): it sizes its collectives' wire by
  // the full layers (LocalWorkers::sampling). Others are refused there.
  bool samples_stages = false;
};

// The usual descriptor: options of type O (engine defaults), a system S
// built from its NodeContext.
template <typename O, typename S>
SystemDescriptor describe_system(std::string name, std::string summary) {
  SystemDescriptor d;
  d.name = std::move(name);
  d.summary = std::move(summary);
  d.make_options = [] { return std::make_unique<O>(); };
  d.make = [](NodeContext& ctx) { return std::make_unique<S>(ctx); };
  return d;
}

// Every registered system, built-ins first in the order the docs list them.
const std::deque<SystemDescriptor>& registered_systems();
// Adds a system (a test's toy system, a plug-in); throws
// std::invalid_argument for a name already taken or missing parts.
void register_system(SystemDescriptor descriptor);

// Null when no system has that name.
const SystemDescriptor* find_system(const std::string& name);
// Throws std::invalid_argument "unknown system 'X' (expected one of ...)".
const SystemDescriptor& system_named(const std::string& name);

// Throws std::invalid_argument, saying what to use instead, when `system`
// runs only on real networks and `backend` is simulated.
void require_real_network(const SystemDescriptor& system, const std::string& backend, bool simulated);
std::vector<std::string> system_names();
std::string system_names_text();  // "stellatrain, ddp, ..."
bool is_system_name(const std::string& name);
// The system summaries compare against (ddp).
const SystemDescriptor& speedup_reference();

// "stellatrain", "stellatrain and topk-sync", "a, b and c": the systems
// whose options have `key` (scenario keys) or `flag` (train flags).
std::vector<std::string> systems_with_key(const std::string& key);
std::vector<std::string> systems_with_flag(const std::string& flag);
std::string join_names(const std::vector<std::string>& names);
// The systems whose stages may run on samples (samples_stages).
std::vector<std::string> systems_sampling_stages();

}  // namespace st::train
