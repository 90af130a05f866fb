#pragma once
// What one training run is: the system, model, data, cluster shape and
// hyper-parameters. Filled by `stellatrain train` (and later by scenarios).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/control/controller.h"

namespace st::train {

struct TrainConfig {
  // stellatrain, ddp, ddp-gloo, topk-sync, local-sgd, cloudless-ma,
  // cloudless-asgd-ga (docs/systems.md), ddp-fp16, ddp-powersgd
  // (docs/systems.md)
  std::string system = "stellatrain";
  std::string model = "cnn";           // st::model::model_names()
  std::string dataset = "fashion-mnist";  // fashion-mnist, cifar10, synthetic
  std::string data_dir;                // empty: the dataset's default
  // The synthetic dataset's images and classes (e.g. 3 x 224 x 224 and 100
  // classes for the ImageNet-shaped models).
  int64_t synthetic_channels = 1, synthetic_height = 28, synthetic_width = 28, synthetic_classes = 10;
  // "full": forward and backward really run and accuracy is measured.
  // "timing": their math is skipped (the simulator still prices them by its
  // compute model) and gradients are synthetic but shaped like real ones
  // (synthetic_gradients.h); compression, exchange and the optimizer run
  // for real. Reports iteration time, traffic and throughput, never
  // accuracy. Needs a backend with a deterministic compute model (sim).
  std::string math = "full";
  // Where the local workers' forward and backward run: cpu, cuda or
  // cuda:N (core/device/compute_device.h; cuda needs a CUDA LibTorch).
  std::string compute_device = "cpu";
  int nodes = 2;
  int gpus_per_node = 1;  // local workers per node (threads, one replica each)
  std::size_t batch_per_worker = 64;
  int iterations = 100;
  // Also stop once the executor's clock (wall or simulated seconds) passes
  // this (0: no limit). The run ends where it is: node 0 is evaluated on its
  // current master copy; other nodes may be an iteration apart, so their
  // checksums need not match after a time-limited run.
  double time_budget_s = 0;

  // Optimizer (SGD, torch semantics; lazy for sparse updates).
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0.0;
  // Linear learning-rate warmup: iteration t < N steps with lr x (t + 1) / N.
  int warmup_iterations = 0;
  // stellatrain's sparse SGD: what momentum does for entries a step does not
  // list (core/optim/sparse_optimizer.h, LazyMomentum): "decay" (the paper's
  // rule) or "exact" (dense momentum, deferred).
  std::string lazy_momentum = "decay";
  // stellatrain: where momentum lives. "master": the CPU sparse SGD applies
  // it to the exchanged sparse gradient (the paper). "node": each node keeps
  // a dense velocity of its own gradient and compresses that (momentum
  // correction, as Deep Gradient Compression does); the master then applies
  // plain SGD. momentum_masking zeroes the velocity of the entries sent.
  std::string momentum_at = "master";
  bool momentum_masking = false;

  // stellatrain and topk-sync.
  double density = 0.05;
  std::string compressor = "thresholdv16";  // stellatrain; topk-sync uses topk
  int staleness = 1;                        // stellatrain: 0 or 1
  // stellatrain, staleness 1 (docs/convergence.md): "none"; "predict" (the
  // forward uses the parameters extrapolated over the updates it misses,
  // from the momentum buffer); "lookahead" (predict, plus this node's own
  // compressed gradient of the missing iteration in place of everyone's);
  // "dc" (delay-compensated gradients, DC-ASGD: g + dc_lambda x g x g x
  // (w_now - w_forward)).
  std::string staleness_compensation = "none";
  double dc_lambda = 0.04;
  bool fp16_values = false;                 // wire encoding of values

  // ddp-powersgd (docs/systems.md): PowerSGD's rank r (PyTorch's
  // matrix_approximation_rank defaults to 1, the paper's experiments use
  // small ranks up to 4; 4 here, the accurate end), the iteration from which
  // it compresses (plain DDP before, PyTorch's start_powerSGD_iter), error
  // feedback and warm start (PyTorch's defaults: both on).
  int powersgd_rank = 4;
  int powersgd_start_iteration = 10;
  bool powersgd_error_feedback = true;
  bool powersgd_warm_start = true;
  // ddp-gloo: "none", or "fp16" for c10d's builtin FP16_COMPRESS hook on
  // the Reducer (one local worker per process).
  std::string comm_hook = "none";

  // stellatrain: the controller (docs/control.md) re-picks the density (and,
  // on unequal GPUs, the batch split) from telemetry; `density` is then
  // only the starting point. Off: the fixed-density ablation.
  bool controller = false;
  control::ControllerOptions control;

  // local-sgd and cloudless-ma: the nodes average their models every
  // `averaging_period` iterations. cloudless-ma: or, with
  // averaging_period_s > 0, about every that many seconds (converted to
  // iterations from the slowest node's mean iteration time at each round;
  // the first round still falls due after averaging_period iterations).
  int averaging_period = 8;
  double averaging_period_s = 0;
  // cloudless-ma: true: a round runs while the cluster keeps training and
  // is applied as (average - snapshot) when it lands; periods that pass
  // while it is in flight are skipped. false: training waits for it.
  bool averaging_overlap = true;
  // local-sgd: iterations of plain DDP (global gradient allreduce) before
  // the local steps start (PyTorch's post-local SGD warmup).
  int local_sgd_start_iteration = 0;
  // cloudless-asgd-ga: each cluster sends its gradients accumulated over
  // this many iterations to the others; a step waits only for peers'
  // accumulations that ended max_staleness or more iterations ago.
  int accumulation_steps = 4;
  int max_staleness = 8;

  // Evaluation.
  int eval_interval = 50;        // iterations between evaluations (0: only at the end)
  std::size_t eval_samples = 2000;  // test samples per evaluation (0: all)
  double target_accuracy = 0.0;  // for the TTA line in the summary (0: none)

  // Runtime.
  std::string transport = "inproc";  // inproc or tcp
  int executor_threads = 0;          // 0: hardware concurrency
  uint64_t seed = 1;
  std::string out_dir;               // results folder ("" = none)
  bool quiet = false;                // no progress output
  // Write out_dir/timeline.json: every compute task and send with its start
  // and end (core/runtime/timeline.h), to see what overlaps what.
  bool timeline = false;

  // tcp: this process is one node (torchrun-style).
  int rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  double peer_timeout_s = 30.0;
  // Where this rank listens, and how peers reach it ("": listen_host when
  // it is a specific address, else the local address on the route to
  // master_addr). The emulator sets both to the node's namespace address.
  std::string listen_host = "0.0.0.0";
  std::string advertise_host;

  // Test hook: an extra per-message delay on the in-process transport.
  double inproc_latency_ms = 0.0;
  double inproc_bandwidth_mbps = 0.0;  // 0: unlimited
};

// Every system a run may name, in the order the docs list them.
const std::vector<std::string>& system_names();
bool is_system_name(const std::string& name);
std::string system_names_text();  // "stellatrain, ddp, ..."

// Throws std::invalid_argument naming the field for bad values.
void validate(const TrainConfig& config);

// The learning-rate multiplier of iteration t (warmup; 1 afterwards).
double lr_scale_at(const TrainConfig& config, int iteration);

}  // namespace st::train
