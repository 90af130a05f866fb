#pragma once
// What one training run is: the system and its options, model, data,
// cluster shape and hyper-parameters. Filled by `stellatrain train` and by
// scenario files (apps/scenario.h).
#include <cstddef>
#include <cstdint>
#include <typeinfo>
#include <string>
#include <vector>

#include "core/model/model_spec.h"
#include "core/train/node/layer_sampling.h"
#include "core/train/system_options.h"
#include "core/util/clone_ptr.h"

namespace st::train {

namespace detail {
// Throws std::logic_error naming both types when `options` is not an O.
[[noreturn]] void wrong_options(const char* wanted, const SystemOptions* options);
}  // namespace detail

template <typename O>
O& checked_options(SystemOptions* options) {
  auto* typed = dynamic_cast<O*>(options);
  if (!typed) detail::wrong_options(typeid(O).name(), options);
  return *typed;
}

// A run bounded by its time budget alone (TrainConfig::iterations).
inline constexpr int kUnboundedIterations = 1'000'000'000;

struct TrainConfig {
  // Starts as stellatrain with its engine defaults (use_system).
  TrainConfig();

  // The system (core/train/system_registry.h, docs/systems.md) and its own
  // options: what only that system reads (density, averaging period, ...).
  std::string system = "stellatrain";
  util::ClonePtr<SystemOptions> options;
  // The run's name in a scenario (its system entry's label, which names its
  // results folder); empty outside one.
  std::string label;
  // Names the system and gives it its engine defaults; throws
  // std::invalid_argument for a name no system has.
  void use_system(const std::string& name);
  // This system's options as its own type; throws std::logic_error when the
  // run is another system's (a programming error, not a user's).
  template <typename O>
  O& options_as() {
    return checked_options<O>(options.get());
  }
  template <typename O>
  const O& options_as() const {
    return checked_options<O>(options.get());
  }

  std::string model = "cnn";           // st::model::model_names(), or model_file's name
  // A TorchScript model of one's own (core/model/torchscript_model.h): its
  // file, declared forward FLOPs per sample (0: measured) and, when
  // declared, its input [channels, height, width] and classes.
  std::string model_file;
  double model_flops = 0;
  std::vector<int64_t> model_input;
  int64_t model_classes = 0;
  model::ModelSpec model_spec() const { return {model, model_file, model_flops, model_input, model_classes}; }
  std::string dataset = "fashion-mnist";  // fashion-mnist, cifar10, synthetic, npz
  std::string data_dir;                // empty: the dataset's default
  std::string data_file;               // npz: the dataset file (core/data/npz_dataset.h)
  // The synthetic dataset's images and classes (e.g. 3 x 224 x 224 and 100
  // classes for the ImageNet-shaped models).
  int64_t synthetic_channels = 1, synthetic_height = 28, synthetic_width = 28, synthetic_classes = 10;
  // Label skew across nodes, in [0, 1] (core/data/placement.h): 0 (the
  // default) shards the whole training set afresh every epoch; above 0 each
  // node holds a fixed subset, a fraction label_skew of each class at the
  // class's home node, so a node alone sees mostly its own classes.
  double label_skew = 0;
  // "full": forward and backward really run and accuracy is measured.
  // "timing": their math is skipped (the simulator still prices them by its
  // compute model) and gradients are synthetic but shaped like real ones
  // (node/synthetic_gradients.h); compression, exchange and the optimizer run
  // for real. Reports iteration time, traffic and throughput, never
  // accuracy. Needs a backend with a deterministic compute model (sim).
  std::string math = "full";
  // Timing mode only: run the CPU stages on a sample of each layer, priced
  // and sent at full size (node/layer_sampling.h, docs/sim.md). Off by
  // default; a system must support it (SystemDescriptor::samples_stages).
  StageSampling stage_sample;
  // Where the local workers' forward and backward run: cpu, cuda or
  // cuda:N (core/device/compute_device.h; cuda needs a CUDA LibTorch).
  std::string compute_device = "cpu";
  int nodes = 2;
  int gpus_per_node = 1;  // local workers per node (threads, one replica each)
  // Clusters with different GPU counts: node n's workers (one entry per
  // node, in engine-node order); empty: every node has gpus_per_node.
  std::vector<int> node_gpus;
  int gpus_of(int node) const;
  int total_workers() const;       // over every node
  int first_worker(int node) const;  // global index of node's worker 0
  bool unequal_gpus() const { return !node_gpus.empty(); }
  std::size_t batch_per_worker = 64;
  // kUnboundedIterations: as many as the time budget allows.
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

  // Evaluation.
  // What evaluations measure: "test" (the test set; what runs report), or
  // "validation" (a tenth of the training set, held out of training in
  // every run: what tuning decides on, so that it never sees a test image).
  std::string evaluate_on = "test";
  int eval_interval = 50;        // iterations between evaluations (0: only at the end)
  std::size_t eval_samples = 0;  // test samples per evaluation (0: all)
  // Once an evaluation has reached eval_dense_until (the highest accuracy
  // whose time-to-accuracy a scenario reports), evaluate only every
  // eval_interval_after iterations: dense where TTA is decided, sparse
  // after (0: eval_interval throughout).
  int eval_interval_after = 0;
  double eval_dense_until = 0;
  double target_accuracy = 0.0;  // for the TTA line in the summary (0: none)

  // Where this run's WAN traces start replaying (seconds of trace time at
  // network time 0): a scenario derives it from the seed, the same for every
  // system of the seed (apps/scenario.h). Backends with a network apply it.
  double trace_offset_s = 0;

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

// Throws std::invalid_argument naming the field for bad values.
void validate(const TrainConfig& config);

// The learning-rate multiplier of iteration t (warmup; 1 afterwards).
double lr_scale_at(const TrainConfig& config, int iteration);

}  // namespace st::train
