// DDP with PyTorch's gradient-compression communication hooks
// (docs/systems.md):
// * ddp-fp16: fp16_compress_hook. Each bucket is cast to fp16, divided by
//   the number of workers and allreduced as halves (half the bytes of ddp),
//   then widened back to fp32; the ring does all of it (AllreduceOptions
//   fp16_wire and predivide), so the step applies no further 1/workers.
// * ddp-powersgd: powerSGD_hook (PowerSGD, powersgd.h). Before
//   powersgd_start_iteration it is ddp; from then on, after backward, one
//   allreduce of the uncompressed layers, one of every P, one of every Q.
#include <atomic>
#include <memory>
#include <mutex>

#include "core/collective/ring_allreduce.h"
#include "core/train/systems/sync/ddp_hook_systems.h"
#include "core/train/systems/sync/powersgd.h"
#include "core/train/systems/sync/sync_options.h"
#include "core/train/systems/sync/sync_system.h"
#include "core/train/systems/sync/sync_systems.h"

namespace st::train {

collective::AllreduceOptions fp16_compress_hook_options(const TrainConfig& config) {
  collective::AllreduceOptions options;
  options.fp16_wire = true;
  // PyTorch divides by the number of DDP processes, one per GPU: here every
  // local worker of every node.
  options.predivide = static_cast<float>(config.total_workers());
  return options;
}

namespace {

class DdpFp16System final : public DdpSystem {
 public:
  explicit DdpFp16System(NodeContext& ctx) : DdpSystem(ctx, fp16_compress_hook_options(ctx.config), "ddp-fp16") {
    set_gradient_scale(1.0f);  // the ring already left the mean
  }
};

PowerSgdOptions powersgd_options(const TrainConfig& c) {
  const auto& o = c.options_as<DdpPowerSgdOptions>();
  PowerSgdOptions options;
  options.rank = o.rank;
  options.error_feedback = o.error_feedback;
  options.warm_start = o.warm_start;
  options.seed = c.seed;  // the same on every node, as PyTorch's PowerSGDState(random_seed)
  return options;
}

class DdpPowerSgdSystem final : public DdpSystem {
 public:
  explicit DdpPowerSgdSystem(NodeContext& ctx)
      : DdpSystem(ctx, {}, "ddp-powersgd"), powersgd_(ctx.workers.layer_shapes(), powersgd_options(ctx.config)) {}

 protected:
  // Before start_iteration: plain DDP (PyTorch's hook falls back to its
  // allreduce hook there), buckets during backward.
  std::function<void(std::size_t)> reduce_during_backward(int t, std::vector<std::vector<float>>& grads,
                                                          IterationRecord& record, std::function<void()> done) override {
    if (t < ctx_.config.options_as<DdpPowerSgdOptions>().start_iteration) return DdpSystem::reduce_during_backward(t, grads, record, done);
    return {};
  }

  void reduce(int, std::vector<std::vector<float>>& grads, IterationRecord& record,
              std::function<void()> done) override {
    auto exchange = std::make_shared<Exchange>();
    exchange->grads = &grads;
    exchange->record = &record;
    exchange->done = std::move(done);
    record.bytes_sent = 0;
    record.bytes_received = 0;
    run_phase(exchange, powersgd_.compute_p_bytes(), [this, &grads] { powersgd_.compute_p(grads); },
              [this, exchange] { exchange_p_and_uncompressed(exchange); });
  }

 private:
  // One iteration's exchange, shared by its callbacks.
  struct Exchange {
    std::vector<std::vector<float>>* grads = nullptr;
    IterationRecord* record = nullptr;
    std::function<void()> done;
    std::atomic<int> before_decompress{2};  // the uncompressed allreduce and Q's
  };

  // The matrix products run where PyTorch's hook runs them, on the GPU
  // (device 0). The simulator prices a "powersgd" task by the bytes it moves
  // through device memory, at the rate of the dense step (sim/compute_model.cc):
  // with r <= 8 the products do at most 2r flops per 4-byte element of M,
  // far below any GPU's flops-to-bandwidth ratio, so reading and writing
  // M (and the error) is what takes the time, not the arithmetic.
  void run_phase(const std::shared_ptr<Exchange>& exchange, double device_bytes, std::function<void()> work,
                 std::function<void()> then) {
    const Nanos start = ctx_.executor.now();
    ctx_.executor.compute(std::move(work), runtime::ComputeCost{runtime::TaskKind::kPowerSgd, -1, device_bytes, ctx_.rank, 0},
                          [this, exchange, start, then = std::move(then)] {
                            exchange->record->compress_ms += detail::ms_since(ctx_.executor, start);
                            then();
                          });
  }

  // Every rank starts the allreduces in the same order: uncompressed, P, Q.
  void exchange_p_and_uncompressed(const std::shared_ptr<Exchange>& exchange) {
    auto& uncompressed = powersgd_.uncompressed();
    collective::ring_allreduce(ctx_.comm, uncompressed.data(), uncompressed.size(), {},
                               [this, exchange](std::exception_ptr error, const collective::CollectiveStats& stats) {
                                 count(exchange, error, stats);
                                 part_before_decompress_done(exchange);
                               });
    auto& p = powersgd_.p();
    collective::ring_allreduce(ctx_.comm, p.data(), p.size(), {},
                               [this, exchange](std::exception_ptr error, const collective::CollectiveStats& stats) {
                                 count(exchange, error, stats);
                                 run_phase(exchange, powersgd_.compute_q_bytes(),
                                           [this, exchange] { powersgd_.compute_q(*exchange->grads); },
                                           [this, exchange] { exchange_q(exchange); });
                               });
  }

  void exchange_q(const std::shared_ptr<Exchange>& exchange) {
    auto& q = powersgd_.q();
    collective::ring_allreduce(ctx_.comm, q.data(), q.size(), {},
                               [this, exchange](std::exception_ptr error, const collective::CollectiveStats& stats) {
                                 count(exchange, error, stats);
                                 part_before_decompress_done(exchange);
                               });
  }

  void part_before_decompress_done(const std::shared_ptr<Exchange>& exchange) {
    if (exchange->before_decompress.fetch_sub(1) != 1) return;
    run_phase(
        exchange, powersgd_.decompress_bytes(),
        [this, exchange] {
          powersgd_.decompress(*exchange->grads, ctx_.config.gpus_of(ctx_.rank), ctx_.config.total_workers());
        },
        [exchange] { exchange->done(); });
  }

  void count(const std::shared_ptr<Exchange>& exchange, std::exception_ptr error,
             const collective::CollectiveStats& stats) {
    if (error) std::rethrow_exception(error);
    std::lock_guard<std::mutex> lock(stats_mutex_);
    exchange->record->bytes_sent += stats.bytes_sent;
    exchange->record->bytes_received += stats.bytes_received;
  }

  PowerSgd powersgd_;
  std::mutex stats_mutex_;
};

}  // namespace

SystemDescriptor ddp_fp16_system() {
  auto d = describe_system<NoOptions, DdpFp16System>(
      "ddp-fp16",
      "DDP with PyTorch's fp16_compress_hook: buckets allreduced as halves");
  d.samples_stages = true;  // DdpSystem's buckets
  return d;
}

SystemDescriptor ddp_powersgd_system() {
  return describe_system<DdpPowerSgdOptions, DdpPowerSgdSystem>(
      "ddp-powersgd",
      "DDP with PyTorch's powerSGD_hook: low-rank P and Q allreduced after backward");
}

}  // namespace st::train
