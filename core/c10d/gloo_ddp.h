#pragma once
// The `ddp-gloo` baseline: PyTorch DistributedDataParallel's C++ machinery
// (c10d::Reducer over a c10d::ProcessGroupGloo) driving st::model replicas,
// followed by a torch::optim::SGD step. One process per rank; each process
// may run G local workers (threads, one replica each) whose gradients are
// summed locally before the cross-process allreduce. docs/ddp-gloo.md says
// exactly what runs. Torch-light header: only <ATen/core/Tensor.h> (via
// model.h) is included.
#include <cstdint>
#include <memory>
#include <vector>

#include "core/c10d/gloo_group.h"
#include "core/model/local_training.h"
#include "core/model/model.h"

namespace st::data {
struct Batch;
}

namespace st::c10d_ddp {

// How gradients are averaged across ranks.
enum class GradientEngine {
  // c10d::Reducer when there is one local worker, bucketed allreduce otherwise.
  kAuto,
  // PyTorch's own c10d::Reducer (DDP's engine). One local worker only.
  kReducer,
  // Our buckets (same layout), ProcessGroupGloo::allreduce per bucket,
  // launched in bucket order from per-parameter autograd hooks.
  kBucketedAllreduce,
};
const char* engine_name(GradientEngine engine);  // "auto", "reducer", "bucketed-allreduce"

// A DDP communication hook on the Reducer (c10d's builtin C++ hooks).
enum class CommHook {
  kNone,          // the Reducer's default: allreduce each bucket, then divide
  kFp16Compress,  // BuiltinCommHookType::FP16_COMPRESS: buckets cast to fp16, divided, allreduced in fp16
};

struct GlooDdpOptions {
  // DDP's defaults: bucket_cap_mb=25 and the 1 MiB first bucket.
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;
  int64_t first_bucket_cap_bytes = 1024 * 1024;
  GradientEngine engine = GradientEngine::kAuto;
  // Registered with Reducer::register_builtin_comm_hook; needs the Reducer
  // engine (one local worker).
  CommHook comm_hook = CommHook::kNone;
  model::SgdSettings sgd;
  // Like DDP's constructor: check every rank has the same parameter shapes,
  // then broadcast parameters and buffers from rank 0.
  bool broadcast_initial_state = true;
  // Workers over every rank, when ranks have different numbers of local
  // workers (clusters of unequal size): the bucketed engine divides the sum
  // by it, and kAuto picks that engine on every rank (c10d's Reducer
  // divides by the number of ranks). 0: ranks x this rank's local workers.
  int workers_in_job = 0;
};

// One step's measurements on this process. Times are wall-clock.
struct StepTelemetry {
  double loss = 0.0;               // mean over this process's local workers
  double forward_ms = 0.0;         // local worker 0's forward and loss
  double backward_ms = 0.0;        // backward start until the last gradient was produced (any worker)
  double allreduce_wait_ms = 0.0;  // last gradient produced until all buckets are reduced into .grad
  double optimizer_ms = 0.0;       // SGD step (plus copying parameters to the other local replicas)
  int64_t bytes_allreduced = 0;    // gradient bytes this process passed to allreduce
  int buckets = 0;                 // allreduce calls this step
};

struct TelemetryTotals {
  int64_t steps = 0;
  double forward_ms = 0.0;
  double backward_ms = 0.0;
  double allreduce_wait_ms = 0.0;
  double optimizer_ms = 0.0;
  int64_t bytes_allreduced = 0;
};

class GlooDdp {
 public:
  // `replicas`: one model per local worker (G = replicas.size() >= 1), all
  // with the same architecture; replica 0 is the one the optimizer updates
  // and whose .grad receives the averaged gradient. Collective calls (the
  // initial broadcast) run here, so every rank must construct its GlooDdp.
  // Throws std::invalid_argument for unusable replicas or options.
  GlooDdp(GlooGroup group, std::vector<model::Model> replicas, GlooDdpOptions options = {});
  ~GlooDdp();
  GlooDdp(const GlooDdp&) = delete;
  GlooDdp& operator=(const GlooDdp&) = delete;

  // One synchronous data-parallel step with one local worker: forward, mean
  // cross-entropy, backward with overlapped bucket allreduce, wait, SGD.
  // Returns the loss.
  double train_step(const data::Batch& batch);
  // Same with G local workers: batches[g] goes to replica g (own thread).
  // Returns the mean local loss. Throws std::invalid_argument unless
  // batches.size() == G. After an exception from a collective (a peer died or
  // timed out) the object must not be used for further steps.
  double train_step(const std::vector<data::Batch>& batches);

  // The SGD learning rate of the following steps (a schedule such as warmup).
  void set_lr(double lr);

  GradientEngine engine() const;  // the engine that runs (never kAuto)
  int local_workers() const;
  const GlooGroup& group() const { return group_; }
  const StepTelemetry& last_step() const { return last_step_; }
  const TelemetryTotals& totals() const { return totals_; }

  // Parameter indices (into replica 0's parameters()) of each bucket, in the
  // order buckets are allreduced. With the Reducer this may change once,
  // after the first step, when it rebuilds buckets in gradient-ready order.
  std::vector<std::vector<std::size_t>> bucket_layout() const;

 private:
  struct Impl;
  void record(const StepTelemetry& step);

  GlooGroup group_;
  std::unique_ptr<Impl> impl_;
  StepTelemetry last_step_;
  TelemetryTotals totals_;
};

// DDP's bucket assignment: parameters in reverse registration order (the
// order their gradients become ready), cut into buckets once a bucket holds
// >= first_cap bytes (the first) or >= cap bytes (the others); a parameter
// is never split. Returned in allreduce order. (c10d's
// compute_bucket_assignment_by_size does the cutting.)
std::vector<std::vector<std::size_t>> ready_order_buckets(const std::vector<at::Tensor>& parameters,
                                                          int64_t first_cap_bytes, int64_t cap_bytes);

}  // namespace st::c10d_ddp
