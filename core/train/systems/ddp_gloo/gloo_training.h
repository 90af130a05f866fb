#pragma once
// The ddp-gloo system: the real PyTorch c10d stack (c10d::Reducer over
// ProcessGroupGloo, see docs/ddp-gloo.md) driving the same models, data
// shards and SGD settings as the engine's systems. It brings its own
// process group and threads, so it runs on the real backend only; the
// engine's Executor and Transport are not involved.
#include "core/train/config.h"
#include "core/train/run/trainer.h"

namespace st::data {
class Dataset;
}

namespace st::train {

// Runs the nodes of this process (all of them for transport "inproc", each
// on its own thread; this process's rank for "tcp"), each with its own
// TCPStore client at master_addr:master_port.
TrainResult run_gloo_training(const TrainConfig& config, const data::Dataset& train, const data::Dataset& test,
                              ResultsWriter& results);

}  // namespace st::train
