#pragma once
// What one training run is: the system, model, data, cluster shape and
// hyper-parameters. Filled by `stellatrain train` (and later by scenarios).
#include <cstddef>
#include <cstdint>
#include <string>

namespace st::train {

struct TrainConfig {
  std::string system = "stellatrain";  // stellatrain, ddp, ddp-gloo, topk-sync
  std::string model = "cnn";           // st::model::model_names()
  std::string dataset = "fashion-mnist";  // fashion-mnist, cifar10, synthetic
  std::string data_dir;                // empty: the dataset's default
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

  // stellatrain and topk-sync.
  double density = 0.05;
  std::string compressor = "thresholdv16";  // stellatrain; topk-sync uses topk
  int staleness = 1;                        // stellatrain: 0 or 1
  bool fp16_values = false;                 // wire encoding of values

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

// Throws std::invalid_argument naming the field for bad values.
void validate(const TrainConfig& config);

}  // namespace st::train
