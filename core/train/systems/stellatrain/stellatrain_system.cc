// StellaTrain (paper section 3): per layer, as soon as backward has produced
// it (while backward goes on with earlier layers), the node's summed
// gradient is compressed (error feedback, and momentum correction when
// momentum lives at the node: both compressor decorators), exchanged by the
// sparse ring allgather, and applied by the sparse optimizer to the CPU
// master copy, which publishes the layer's new version. The next
// iteration's forward only waits until every layer is at version >= t -
// staleness, so with staleness 1 compression, exchange and optimizer of
// iteration t overlap with the forward and backward of iteration t+1. How a
// stale forward is compensated is a strategy (staleness_compensation.h);
// what the controller learns of the exchanges is core/telemetry's
// (exchange_log.h).
//
// Forward gating is per model, not per layer: LibTorch runs a module's
// forward as one call, so the replica is loaded once every layer is recent
// enough (docs/engine.md discusses what per-layer gating would add).
//
// Per-iteration bookkeeping lives only while an iteration is in flight (at
// most staleness + 2 of them), so a run needs no iteration count up front.

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "core/collective/sparse_allgather.h"
#include "core/compress/compressor.h"
#include "core/compress/compressors.h"
#include "core/optim/sparse_optimizer.h"
#include "core/telemetry/exchange_log.h"
#include "core/telemetry/node_telemetry.h"
#include "core/train/node/control_agent.h"
#include "core/train/node/ordered_stage.h"
#include "core/train/system.h"
#include "core/train/systems/stellatrain/staleness_compensation.h"
#include "core/train/systems/stellatrain/stellatrain.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"

namespace st::train {
namespace {

using runtime::Nanos;

// The compressor chain: error feedback around the selector, momentum
// correction around that when momentum lives at the node, and local
// gradient clipping outermost (it bounds what the others accumulate).
std::string compressor_chain(const StellaTrainOptions& o) {
  std::string chain = "ef:" + o.compressor;
  if (o.momentum_at == "node") chain = (o.momentum_masking ? "mcm:" : "mc:") + chain;
  if (o.clip_norm > 0) chain = "clip:" + chain;
  return chain;
}

// With local gradient clipping on: how often each tensor was clipped on
// this node and its gradient norms before clipping, as the mean of the
// node's workers' gradients (the node compresses their sum), so a reader
// can tell whether a clip_norm bound at all and what a tighter one would
// cut. The run's summary has rank 0's node's (core/train/run/trainer.cc).
nlohmann::json clipping_stats(const std::vector<std::unique_ptr<compress::TensorState>>& states, int node_workers) {
  const auto share = [](std::size_t clipped, std::size_t seen) {
    return seen ? static_cast<double>(clipped) / static_cast<double>(seen) : 0.0;
  };
  nlohmann::json tensors = nlohmann::json::object();
  std::size_t seen = 0, clipped = 0;
  for (const auto& state : states) {
    const auto c = compress::GradientClipping::counts(*state);
    seen += c.seen;
    clipped += c.clipped;
    tensors[state->name] = {{"clipped_share", share(c.clipped, c.seen)},
                            {"mean_norm", c.mean_norm / node_workers},
                            {"largest_norm", c.largest_norm / node_workers}};
  }
  return {{"tensor_steps", seen}, {"clipped_share", share(clipped, seen)}, {"tensors", tensors}};
}

// What one iteration needs while it is in flight on this node.
struct InFlight {
  IterationRecord record;
  std::atomic<std::size_t> remaining_layers{0};
  // Two events complete a record: the pipeline's end, and the next
  // iteration's start (for the last iteration: its gradients' `done`).
  std::atomic<int> events{0};
  Nanos backward_done{0};
  double pipeline_end_s = 0;
  // The next iteration's start, set before that start counts as an event.
  // Kept here rather than read from the next iteration's entry: on a loaded
  // machine the next iteration can finish and leave first (its last layer's
  // optimize may overtake this one's layer_done), and a lookup would make a
  // fresh entry whose start is 0.
  double next_start_s = 0;
  double density = 0;
  std::vector<double> worker_ms;  // forward + backward per worker
  std::size_t compressed = 0;     // layers compressed here (under the system's record mutex)
};

class StellaTrainSystem final : public System {
 public:
  explicit StellaTrainSystem(NodeContext& ctx)
      : ctx_(ctx), o_(ctx.config.options_as<StellaTrainOptions>()), numels_(ctx.workers.layer_numels()) {
    const auto& c = ctx.config;
    const std::size_t layers = numels_.size();
    const auto names = ctx.workers.layer_names();
    const bool node_momentum = o_.momentum_at == "node";
    compress::CompressorOptions compressor_options{simd::default_level(), c.seed};
    compressor_options.momentum = static_cast<float>(c.momentum);
    // The compressor sees the sum of the node's workers' gradients.
    compressor_options.clip_norm = static_cast<float>(o_.clip_norm * c.gpus_of(ctx.rank));
    compressor_ = compress::make_compressor(compressor_chain(o_), compressor_options);
    optimizer_ = optim::make_sparse_sgd({c.lr, node_momentum ? 0.0 : c.momentum, 0.0, false, c.weight_decay,
                                         optim::parse_lazy_momentum(o_.lazy_momentum)});
    slots_ = static_cast<std::size_t>(o_.staleness) + 1;
    grads_.resize(slots_);
    staged_.resize(slots_);
    chunks_.assign(slots_, std::vector<compress::SparseChunk>(layers));
    compress_stage_ = std::vector<OrderedStage>(layers);
    optimize_stage_ = std::vector<OrderedStage>(layers);
    // With the controller, k changes per iteration: compressor states are
    // sized for the largest density it may choose; the output chunks start
    // at the first density and grow in compress_layer when the controller
    // goes above it (sized for max_density up front, they held 0.5 x the
    // model twice per node, which the paper-scale runs, sitting at 0.1%,
    // never use).
    // A density warm-up starts above both.
    double max_density = ctx.control ? std::max(o_.density, o_.control.max_density) : o_.density;
    if (o_.warmup.on()) max_density = std::max(max_density, o_.warmup.start);
    // Layers sent whole are picked by their full size: on sampled stages
    // (layer_sampling.h) the wire still carries the full layer.
    const auto& full = ctx.workers.sampling().full_numels();
    for (std::size_t l = 0; l < layers; ++l) {
      whole_.push_back(full[l] <= static_cast<std::size_t>(o_.dense_up_to));
      const std::size_t k = k_at(l, max_density);
      ks_.push_back(k_at(l, o_.density));
      compress_states_.push_back(compressor_->make_state(numels_[l], k, names[l]));
      optim_states_.push_back(optimizer_->make_state(numels_[l], names[l]));
      for (auto& slot : chunks_) slot[l].reserve(compressor_->max_output(numels_[l], ks_[l]));
    }
    scale_ = 1.0f / static_cast<float>(c.total_workers());
    compensation_ = make_staleness_compensation(
        {c, o_, *optimizer_, layers, c.gpus_of(ctx.rank),
         [this](int t, std::size_t l) -> const compress::SparseChunk& { return chunks_[slot_of(t)][l]; },
         [this](int t, std::size_t l) -> const std::vector<float>& { return staged_[slot_of(t)][l]; }});
    if (compensation_->shapes_view() || o_.lazy_momentum == "exact") install_view();
  }

  std::string name() const override { return "stellatrain"; }

  nlohmann::json stats() const override {
    if (o_.clip_norm <= 0) return nlohmann::json::object();
    return {{"clipping", clipping_stats(compress_states_, ctx_.config.gpus_of(ctx_.rank))}};
  }

  void start(runtime::Task finished) override {
    finished_ = std::move(finished);
    run_iteration(0);
  }

 private:
  std::size_t slot_of(int t) const { return static_cast<std::size_t>(t) % slots_; }

  // Iteration t's state, made when t starts (run_iteration) and nowhere
  // else: a lookup after t has left would otherwise make a fresh entry whose
  // times are 0 and report a nonsense record.
  InFlight& begin_in_flight(int t) {
    std::lock_guard<std::mutex> lock(in_flight_mutex_);
    auto& entry = in_flight_[t];
    if (!entry) {
      entry = std::make_unique<InFlight>();
      entry->remaining_layers = numels_.size();
      entry->density = o_.density;
    }
    return *entry;
  }
  // Iteration t's state while it is in flight; a lookup outside that is a
  // bug in this file's event order, so it throws rather than making one.
  InFlight& in_flight(int t) {
    std::lock_guard<std::mutex> lock(in_flight_mutex_);
    const auto it = in_flight_.find(t);
    if (it == in_flight_.end())
      throw std::logic_error("stellatrain: iteration " + std::to_string(t) + " looked up while not in flight");
    return *it->second;
  }
  // Null once the iteration's record is complete and it has left.
  InFlight* find_in_flight(int t) {
    std::lock_guard<std::mutex> lock(in_flight_mutex_);
    const auto it = in_flight_.find(t);
    return it == in_flight_.end() ? nullptr : it->second.get();
  }
  void forget(int t) {
    std::lock_guard<std::mutex> lock(in_flight_mutex_);
    in_flight_.erase(t);
  }

  void run_iteration(int t) {
    if (t == ctx_.config.iterations) return;
    const Nanos asked = ctx_.executor.now();
    ctx_.master.when_all_at_least(t - o_.staleness, [this, t, asked] {
      InFlight& it = begin_in_flight(t);
      IterationRecord& record = it.record;
      record.rank = ctx_.rank;
      record.iteration = t;
      record.start_s = std::chrono::duration<double>(ctx_.executor.now()).count();
      record.wait_ms = detail::ms_since(ctx_.executor, asked);
      if (ctx_.control) {
        ctx_.control->begin_iteration(t);
        it.density = ctx_.control->density_at(t);
        ctx_.workers.set_batches(ctx_.control->batch_at(t));
      }
      it.density = o_.warmup.density_at(t, it.density);
      record.density = it.density;
      record.staleness = std::min(t, o_.staleness);
      if (t > 0) {  // the previous iteration's duration is known now
        in_flight(t - 1).next_start_s = record.start_s;
        mark_event(t - 1);
      }
      if (compensation_->forward_waits_for_own_compression() && t > 0) {
        when_compressed(t - 1, [this, t] { run_forward(t); });
      } else {
        run_forward(t);
      }
    });
  }

  void run_forward(int t) {
    ctx_.workers.load(ctx_.master, t, staged_[slot_of(t)], compensation_->keeps_forward_values(),
                      [this, t](double load_ms) {
                        in_flight(t).record.load_ms = load_ms;
                        compute_gradients(t);
                      });
  }

  void compute_gradients(int t) {
    auto& grads = grads_[slot_of(t)];
    ctx_.workers.compute_gradients(
        grads, [this, t](std::size_t l) { start_layer(t, l); },
        [this, t](const LocalStepTimes& times) {
          InFlight& it = in_flight(t);
          record_local_times(it.record, times);
          it.worker_ms = times.worker_ms;
          it.backward_done = ctx_.executor.now();
          if (t + 1 == ctx_.config.iterations) mark_event(t);
          run_iteration(t + 1);
        });
  }

  // Runs `task` once every layer of iteration t is compressed here (at once
  // when the iteration has already left the pipeline).
  void when_compressed(int t, runtime::Task task) {
    {
      std::lock_guard<std::mutex> lock(record_mutex_);
      InFlight* it = find_in_flight(t);
      if (it && it->compressed < numels_.size()) {
        after_compress_[t] = std::move(task);
        return;
      }
    }
    task();
  }

  void layer_compressed(int t) {
    runtime::Task ready;
    {
      std::lock_guard<std::mutex> lock(record_mutex_);
      if (++in_flight(t).compressed < numels_.size()) return;
      auto it = after_compress_.find(t);
      if (it == after_compress_.end()) return;
      ready = std::move(it->second);
      after_compress_.erase(it);
    }
    ctx_.executor.post(std::move(ready));
  }

  // Layer l enters once backward has produced it. Compression keeps the
  // iteration order per layer; collectives start in one global order on
  // every rank (last layer first), whatever order backward produced them in.
  void start_layer(int t, std::size_t l) {
    compress_stage_[l].submit(static_cast<uint64_t>(t), [this, t, l](std::function<void()> next) {
      const Nanos start = ctx_.executor.now();
      runtime::ComputeCost cost{runtime::TaskKind::kCompress, static_cast<int>(l), static_cast<double>(numels_[l]),
                                ctx_.rank, -1};
      // The density is fixed when the iteration starts: one k serves the
      // price and the compression.
      const std::size_t k = k_of(t, l);
      cost.density = static_cast<double>(k) / static_cast<double>(numels_[l]);  // priced at what it keeps
      ctx_.executor.compute([this, t, l, k] { compress_layer(t, l, k); }, cost,
                            [this, t, l, next, start] {
                              add_ms(in_flight(t).record.compress_ms, detail::ms_since(ctx_.executor, start));
                              layer_compressed(t);
                              next();
                              const uint64_t order =
                                  static_cast<uint64_t>(t) * numels_.size() + (numels_.size() - 1 - l);
                              exchange_order_.submit(order, [this, t, l](std::function<void()> started) {
                                exchange_layer(t, l);
                                started();
                              });
                            });
    });
  }

  // Elements layer l keeps in iteration t: at the density run_iteration
  // set (the configured one, the controller's, or the warm-up's).
  std::size_t k_of(int t, std::size_t l) { return k_at(l, in_flight(t).density); }

  // Elements layer l keeps at `density`: all of them for a layer sent whole
  // (the controller's TrafficModel prices it the same way).
  std::size_t k_at(std::size_t l, double density) const {
    return whole_[l] ? numels_[l] : compress::k_for_density(numels_[l], density);
  }

  void compress_layer(int t, std::size_t l, std::size_t k) {
    auto& chunk = chunks_[slot_of(t)][l];
    const std::size_t capacity = compressor_->max_output(numels_[l], k);
    if (chunk.indices.size() < capacity) chunk.reserve(capacity);
    chunk.count = compressor_->compress(Span<const float>(grads_[slot_of(t)][l]), k, *compress_states_[l],
                                        chunk.buffers());
  }

  void exchange_layer(int t, std::size_t l) {
    const Nanos start = ctx_.executor.now();
    const auto& chunk = chunks_[slot_of(t)][l];
    collective::SparseAllgatherOptions options;
    options.values = o_.fp16_values ? compress::ValueEncoding::kF16 : compress::ValueEncoding::kF32;
    options.wire_numel = ctx_.workers.sampling().full_numels()[l];
    collective::sparse_ring_allgather(
        ctx_.comm, chunk.view(), numels_[l], options,
        [this, t, l, start](std::exception_ptr error, compress::SparseChunk&& sum, const collective::CollectiveStats& stats) {
          if (error) std::rethrow_exception(error);
          IterationRecord& r = in_flight(t).record;
          add_ms(r.exchange_ms, detail::ms_since(ctx_.executor, start));
          {
            std::lock_guard<std::mutex> lock(record_mutex_);
            r.bytes_sent += stats.bytes_sent;
            r.bytes_received += stats.bytes_received;
          }
          exchanges_.add(t, start, ctx_.executor.now());
          optimize_after_exchange(t, l, std::make_shared<compress::SparseChunk>(std::move(sum)));
        });
  }

  void optimize_after_exchange(int t, std::size_t l, std::shared_ptr<compress::SparseChunk> sum) {
    optimize_stage_[l].submit(static_cast<uint64_t>(t), [this, t, l, sum](std::function<void()> next) {
      const Nanos optimize_start = ctx_.executor.now();
      ctx_.executor.compute([this, t, l, sum] { optimize_layer(t, l, *sum); },
                            runtime::ComputeCost{runtime::TaskKind::kOptimize, static_cast<int>(l), static_cast<double>(sum->count),
                                                 ctx_.rank, -1},
                            [this, t, l, next, optimize_start] {
                              // Published once the step's (virtual) time has passed, so
                              // no forward can see the layer earlier than that.
                              ctx_.master.publish(l, t + 1);
                              add_ms(in_flight(t).record.optimize_ms, detail::ms_since(ctx_.executor, optimize_start));
                              next();
                              layer_done(t, l);
                            });
    });
  }

  void optimize_layer(int t, std::size_t l, compress::SparseChunk& sum) {
    for (std::size_t j = 0; j < sum.count; ++j) sum.values[j] *= scale_;  // mean over all workers
    const optim::SparseGrad grad{Span<const uint32_t>(sum.indices.data(), sum.count),
                                 Span<const float>(sum.values.data(), sum.count)};
    ctx_.master.with_layer(l, [&](float* data, std::size_t n) {
      optim::ParamState& state = *optim_states_[l];
      compensation_->correct(t, l, Span<const float>(data, n), state, sum);
      state.lr_scale = lr_scale_at(ctx_.config, t);
      optimizer_->step(Span<float>(data, n), grad, state);
    });
  }

  // Readers of the master (the replicas' load, evaluation) see what
  // optimizer_->extrapolate shows: the deferred movement of exact lazy
  // momentum, and with a compensation that shapes the view the updates a
  // stale forward misses (target - steps applied so far, 0 or 1 with
  // staleness 1), as the strategy says. It runs under the layer's lock, as
  // the optimizer's steps do, so state and values agree.
  void install_view() {
    ctx_.master.set_view([this](std::size_t l, const float* stored, std::size_t n, int target, float* out) {
      const optim::ParamState& state = *optim_states_[l];
      const int missing = target - static_cast<int>(state.step);
      optimizer_->extrapolate(Span<const float>(stored, n), state, compensation_->steps_ahead(missing),
                              Span<float>(out, n));
      compensation_->adjust_view(l, target, missing, out);
    });
  }

  void layer_done(int t, std::size_t) {
    InFlight& it = in_flight(t);
    if (it.remaining_layers.fetch_sub(1) != 1) return;
    it.record.pipeline_ms = detail::ms_since(ctx_.executor, it.backward_done);
    it.pipeline_end_s = std::chrono::duration<double>(ctx_.executor.now()).count();
    mark_event(t);
  }

  // An iteration's record is complete once its pipeline is done and the next
  // iteration has started (its start time ends this one's duration). Layers
  // leave during backward, so a pipeline can end before `done` has filled
  // the record.
  void mark_event(int t) {
    InFlight& it = in_flight(t);
    if (it.events.fetch_add(1) + 1 != 2) return;
    IterationRecord& r = it.record;
    const double end_s = t + 1 < ctx_.config.iterations ? it.next_start_s : it.pipeline_end_s;
    r.iteration_ms = (end_s - r.start_s) * 1e3;
    if (ctx_.control) ctx_.control->report(telemetry_of(t, it));
    const IterationRecord record = r;  // the entry leaves below
    forget(t);
    // Handed on in iteration order: on a loaded machine t + 1 can complete
    // before t, and iterations.csv, the progress lines and the evaluations
    // every few iterations should not see them swapped. The run ends once
    // the last record has been handed on, not merely completed.
    report_order_.submit(static_cast<uint64_t>(t), [this, t, record](std::function<void()> next) {
      ctx_.on_iteration_done(t, record);
      next();
      if (t + 1 == ctx_.config.iterations) ctx_.executor.post(finished_);
    });
  }

  // What the controller needs from iteration t (core/telemetry).
  telemetry::NodeTelemetry telemetry_of(int t, const InFlight& it) {
    const IterationRecord& r = it.record;
    telemetry::NodeTelemetry out;
    out.rank = ctx_.rank;
    out.iteration = t;
    out.time_s = std::chrono::duration<double>(ctx_.executor.now()).count();
    out.forward_ms = r.forward_ms;
    out.backward_ms = r.backward_ms;
    out.gather_ms = r.gather_ms;
    out.wait_ms = r.wait_ms;
    out.pipeline_ms = r.pipeline_ms;
    out.iteration_ms = r.iteration_ms;
    if (o_.control.window_includes_load) out.load_ms = r.load_ms;
    out.density = it.density;
    out.batch = r.batch;
    out.gpu_compute_ms = it.worker_ms;
    auto exchanges = exchanges_.take(t);
    out.exchange_busy_ms = exchanges.busy_ms;
    out.exchange_shortest_ms = exchanges.shortest_ms;
    out.exchange_intervals_ms = std::move(exchanges.intervals_ms);
    if (o_.control.estimator.after_previous_iteration) out.exchange_origin_ms = exchanges.origin_ms;
    std::lock_guard<std::mutex> lock(record_mutex_);
    out.exchange_bytes = r.bytes_received;
    return out;
  }

  void add_ms(double& field, double ms) {
    std::lock_guard<std::mutex> lock(record_mutex_);
    field += ms;
  }

  NodeContext& ctx_;
  const StellaTrainOptions& o_;
  std::vector<std::size_t> numels_;
  std::vector<std::size_t> ks_;
  std::vector<bool> whole_;  // per layer: sent whole every iteration (dense_up_to)
  std::unique_ptr<compress::Compressor> compressor_;
  std::unique_ptr<optim::SparseOptimizer> optimizer_;
  std::unique_ptr<StalenessCompensation> compensation_;
  std::vector<std::unique_ptr<compress::TensorState>> compress_states_;
  std::vector<std::unique_ptr<optim::ParamState>> optim_states_;
  std::size_t slots_ = 1;
  std::vector<std::vector<std::vector<float>>> grads_;      // [slot][layer]
  std::vector<std::vector<std::vector<float>>> staged_;     // [slot][layer]: what the forward used
  std::vector<std::vector<compress::SparseChunk>> chunks_;  // [slot][layer]
  std::map<int, runtime::Task> after_compress_;
  std::vector<OrderedStage> compress_stage_, optimize_stage_;  // per layer
  OrderedStage exchange_order_;
  OrderedStage report_order_;  // completed records, by iteration
  telemetry::ExchangeLog exchanges_;
  std::mutex in_flight_mutex_;
  std::map<int, std::unique_ptr<InFlight>> in_flight_;
  std::mutex record_mutex_;
  float scale_ = 1.0f;
  runtime::Task finished_;
};

}  // namespace

SystemDescriptor stellatrain_system() {
  auto d = describe_system<StellaTrainOptions, StellaTrainSystem>(
      "stellatrain",
      "StellaTrain: per-layer CPU compression, sparse exchange and sparse SGD overlapped with the next iteration "
      "(staleness 1), density picked by the controller");
  d.samples_stages = true;
  return d;
}

}  // namespace st::train
