// StellaTrain (paper section 3): per layer, as soon as backward has produced
// it (while backward goes on with earlier layers), the node's summed
// gradient is compressed with error feedback, exchanged by the sparse ring
// allgather, and applied by the sparse optimizer to the CPU master copy,
// which publishes the layer's new version. The next iteration's forward only
// waits until every layer is at version >= t - staleness, so with staleness 1
// compression, exchange and optimizer of iteration t overlap with the
// forward and backward of iteration t+1.
//
// Forward gating is per model, not per layer: LibTorch runs a module's
// forward as one call, so the replica is loaded once every layer is recent
// enough (docs/engine.md discusses what per-layer gating would add).

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>

#include "core/collective/sparse_allgather.h"
#include "core/compress/compressor.h"
#include "core/optim/sparse_optimizer.h"
#include "core/telemetry/node_telemetry.h"
#include "core/train/control_agent.h"
#include "core/train/ordered_stage.h"
#include "core/train/system.h"

namespace st::train {
namespace {

using runtime::Nanos;

class StellaTrainSystem final : public System {
 public:
  explicit StellaTrainSystem(NodeContext& ctx) : ctx_(ctx), numels_(ctx.workers.layer_numels()) {
    const auto& c = ctx.config;
    const std::size_t layers = numels_.size();
    const auto names = ctx.workers.layer_names();
    compressor_ = compress::make_compressor("ef:" + c.compressor, {simd::default_level(), c.seed});
    node_momentum_ = c.momentum_at == "node";
    optimizer_ = optim::make_sparse_sgd({c.lr, node_momentum_ ? 0.0 : c.momentum, 0.0, false, c.weight_decay,
                                         optim::parse_lazy_momentum(c.lazy_momentum)});
    slots_ = static_cast<std::size_t>(c.staleness) + 1;
    grads_.resize(slots_);
    staged_.resize(slots_);
    predict_ = c.staleness_compensation == "predict" || c.staleness_compensation == "lookahead";
    lookahead_ = c.staleness_compensation == "lookahead";
    delay_compensated_ = c.staleness_compensation == "dc";
    chunks_.assign(slots_, std::vector<compress::SparseChunk>(layers));
    compress_stage_ = std::vector<OrderedStage>(layers);
    optimize_stage_ = std::vector<OrderedStage>(layers);
    // With the controller, k changes per iteration: compressor states are
    // sized for the largest density it may choose; the output chunks start
    // at the first density and grow in compress_layer when the controller
    // goes above it (sized for max_density up front, they held 0.5 x the
    // model twice per node, which the paper-scale runs, sitting at 0.1%,
    // never use).
    const double max_density = ctx.control ? std::max(c.density, c.control.max_density) : c.density;
    for (std::size_t l = 0; l < layers; ++l) {
      const std::size_t k = compress::k_for_density(numels_[l], max_density);
      ks_.push_back(compress::k_for_density(numels_[l], c.density));
      compress_states_.push_back(compressor_->make_state(numels_[l], k, names[l]));
      optim_states_.push_back(optimizer_->make_state(numels_[l], names[l]));
      for (auto& slot : chunks_) slot[l].reserve(compressor_->max_output(numels_[l], ks_[l]));
    }
    records_.resize(static_cast<std::size_t>(c.iterations));
    remaining_layers_ = std::vector<std::atomic<std::size_t>>(static_cast<std::size_t>(c.iterations));
    for (auto& r : remaining_layers_) r = layers;
    events_ = std::vector<std::atomic<int>>(static_cast<std::size_t>(c.iterations));
    backward_done_.resize(static_cast<std::size_t>(c.iterations));
    pipeline_end_s_.resize(static_cast<std::size_t>(c.iterations));
    exchanges_.resize(static_cast<std::size_t>(c.iterations));
    densities_.assign(static_cast<std::size_t>(c.iterations), c.density);
    worker_ms_.resize(static_cast<std::size_t>(c.iterations));
    compressed_.assign(static_cast<std::size_t>(c.iterations), 0);
    scale_ = 1.0f / static_cast<float>(c.nodes * c.gpus_per_node);
    if (delay_compensated_) current_.resize(layers);
    if (node_momentum_)
      for (std::size_t l = 0; l < layers; ++l) velocity_.emplace_back(numels_[l], 0.0f);
    if (predict_ || lookahead_ || c.lazy_momentum == "exact") install_view();
  }

  std::string name() const override { return "stellatrain"; }

  void start(runtime::Task finished) override {
    finished_ = std::move(finished);
    run_iteration(0);
  }

 private:
  void run_iteration(int t) {
    if (t == ctx_.config.iterations) return;
    const Nanos asked = ctx_.executor.now();
    ctx_.master.when_all_at_least(t - ctx_.config.staleness, [this, t, asked] {
      IterationRecord& record = records_[static_cast<std::size_t>(t)];
      record.rank = ctx_.rank;
      record.iteration = t;
      record.start_s = std::chrono::duration<double>(ctx_.executor.now()).count();
      record.wait_ms = detail::ms_since(ctx_.executor, asked);
      if (ctx_.control) {
        ctx_.control->begin_iteration(t);
        densities_[static_cast<std::size_t>(t)] = ctx_.control->density_at(t);
        ctx_.workers.set_batches(ctx_.control->batch_at(t));
      }
      record.density = densities_[static_cast<std::size_t>(t)];
      record.staleness = std::min(t, ctx_.config.staleness);
      if (t > 0) mark_event(t - 1);  // the previous iteration's duration is known now
      // Lookahead reads this node's compressed gradient of t - 1: wait for it.
      if (lookahead_ && t > 0) {
        when_compressed(t - 1, [this, t] { run_forward(t); });
      } else {
        run_forward(t);
      }
    });
  }

  void run_forward(int t) {
      // Delay compensation reads what the forward used, in timing mode too.
      ctx_.workers.load(ctx_.master, t, staged_[static_cast<std::size_t>(t) % slots_], delay_compensated_);
      auto& grads = grads_[static_cast<std::size_t>(t) % slots_];
      ctx_.workers.compute_gradients(
          grads, [this, t](std::size_t l) { start_layer(t, l); },
          [this, t](const LocalStepTimes& times) {
            IterationRecord& r = records_[static_cast<std::size_t>(t)];
            r.forward_ms = times.forward_ms;
            r.backward_ms = times.backward_ms;
            r.device_forward_ms = times.device_forward_ms;
            r.device_backward_ms = times.device_backward_ms;
            r.gather_ms = times.gather_ms;
            r.loss = times.loss;
            r.batch = times.batch;
            worker_ms_[static_cast<std::size_t>(t)] = times.worker_ms;
            backward_done_[static_cast<std::size_t>(t)] = ctx_.executor.now();
            if (t + 1 == ctx_.config.iterations) mark_event(t);
            run_iteration(t + 1);
          });
  }

  // Runs `task` once every layer of iteration t is compressed here.
  void when_compressed(int t, runtime::Task task) {
    {
      std::lock_guard<std::mutex> lock(record_mutex_);
      if (compressed_[static_cast<std::size_t>(t)] < numels_.size()) {
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
      if (++compressed_[static_cast<std::size_t>(t)] < numels_.size()) return;
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
      ctx_.executor.compute([this, t, l] { compress_layer(t, l); },
                            runtime::ComputeCost{"compress", static_cast<int>(l), static_cast<double>(numels_[l]),
                                                 ctx_.rank, -1},
                            [this, t, l, next, start] {
                              add_ms(records_[static_cast<std::size_t>(t)].compress_ms,
                                     detail::ms_since(ctx_.executor, start));
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

  void compress_layer(int t, std::size_t l) {
    const std::size_t slot = static_cast<std::size_t>(t) % slots_;
    auto& chunk = chunks_[slot][l];
    const std::size_t k =
        ctx_.control ? compress::k_for_density(numels_[l], densities_[static_cast<std::size_t>(t)]) : ks_[l];
    const std::size_t capacity = compressor_->max_output(numels_[l], k);
    if (chunk.indices.size() < capacity) chunk.reserve(capacity);
    if (!node_momentum_) {
      chunk.count = compressor_->compress(Span<const float>(grads_[slot][l]), k, *compress_states_[l], chunk.buffers());
      return;
    }
    // Momentum correction: the velocity u = m u + g is what error feedback
    // accumulates and the compressor selects from.
    auto& u = velocity_[l];
    const auto& g = grads_[slot][l];
    const float m = static_cast<float>(ctx_.config.momentum);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = m * u[i] + g[i];
    chunk.count = compressor_->compress(Span<const float>(u), k, *compress_states_[l], chunk.buffers());
    if (ctx_.config.momentum_masking)
      for (std::size_t j = 0; j < chunk.count; ++j) u[chunk.indices[j]] = 0.0f;
  }

  void exchange_layer(int t, std::size_t l) {
    const Nanos start = ctx_.executor.now();
    const auto& chunk = chunks_[static_cast<std::size_t>(t) % slots_][l];
    collective::SparseAllgatherOptions options;
    options.values = ctx_.config.fp16_values ? compress::ValueEncoding::kF16 : compress::ValueEncoding::kF32;
    collective::sparse_ring_allgather(
        ctx_.comm, chunk.view(), numels_[l], options,
        [this, t, l, start](std::exception_ptr error, compress::SparseChunk&& sum, const collective::CollectiveStats& stats) {
          if (error) std::rethrow_exception(error);
          IterationRecord& r = records_[static_cast<std::size_t>(t)];
          add_ms(r.exchange_ms, detail::ms_since(ctx_.executor, start));
          {
            std::lock_guard<std::mutex> lock(record_mutex_);
            r.bytes_sent += stats.bytes_sent;
            r.bytes_received += stats.bytes_received;
            exchanges_[static_cast<std::size_t>(t)].push_back({start, ctx_.executor.now()});
          }
          auto shared_sum = std::make_shared<compress::SparseChunk>(std::move(sum));
          optimize_stage_[l].submit(static_cast<uint64_t>(t), [this, t, l, shared_sum](std::function<void()> next) {
            const Nanos optimize_start = ctx_.executor.now();
            ctx_.executor.compute([this, t, l, shared_sum] { optimize_layer(t, l, *shared_sum); },
                                  runtime::ComputeCost{"optimize", static_cast<int>(l),
                                                       static_cast<double>(shared_sum->count), ctx_.rank, -1},
                                  [this, t, l, next, optimize_start] {
                                    // Published once the step's (virtual) time has passed, so
                                    // no forward can see the layer earlier than that.
                                    ctx_.master.publish(l, t + 1);
                                    add_ms(records_[static_cast<std::size_t>(t)].optimize_ms,
                                           detail::ms_since(ctx_.executor, optimize_start));
                                    next();
                                    layer_done(t, l);
                                  });
          });
        });
  }

  void optimize_layer(int t, std::size_t l, compress::SparseChunk& sum) {
    for (std::size_t j = 0; j < sum.count; ++j) sum.values[j] *= scale_;  // mean over all workers
    const optim::SparseGrad grad{Span<const uint32_t>(sum.indices.data(), sum.count),
                                 Span<const float>(sum.values.data(), sum.count)};
    ctx_.master.with_layer(l, [&](float* data, std::size_t n) {
      optim::ParamState& state = *optim_states_[l];
      if (delay_compensated_) compensate_delay(t, l, Span<const float>(data, n), state, sum);
      state.lr_scale = lr_scale_at(ctx_.config, t);
      optimizer_->step(Span<float>(data, n), grad, state);
    });
  }

  // DC-ASGD (Zheng et al., ICML 2017): the gradient was taken at the
  // parameters the forward used, w_f; a first-order Taylor step towards the
  // current parameters w_now, with the Hessian approximated by lambda g*g,
  // gives g + lambda g*g*(w_now - w_f). Only the listed entries change.
  void compensate_delay(int t, std::size_t l, Span<const float> stored, const optim::ParamState& state,
                        compress::SparseChunk& sum) {
    auto& now = current_[l];
    now.resize(stored.size());
    optimizer_->extrapolate(stored, state, 0, Span<float>(now));  // what a reader sees now
    const auto& used = staged_[static_cast<std::size_t>(t) % slots_][l];
    const float lambda = static_cast<float>(ctx_.config.dc_lambda);
    for (std::size_t j = 0; j < sum.count; ++j) {
      const uint32_t i = sum.indices[j];
      const float g = sum.values[j];
      sum.values[j] = g + lambda * g * g * (now[i] - used[i]);
    }
  }

  // Readers of the master (the replicas' load, evaluation) see what
  // optimizer_->extrapolate shows: the deferred movement of exact lazy
  // momentum, and with prediction the updates a stale forward misses
  // (target - steps applied so far, 0 or 1 with staleness 1): their momentum
  // part, plus with lookahead this node's own compressed gradient of the
  // missing iteration standing in for the mean of all nodes' (docs/convergence.md).
  // It runs under the layer's lock, as the optimizer's steps do, so state
  // and values agree.
  void install_view() {
    ctx_.master.set_view([this](std::size_t l, const float* stored, std::size_t n, int target, float* out) {
      const optim::ParamState& state = *optim_states_[l];
      const int missing = target - static_cast<int>(state.step);
      const uint32_t ahead = predict_ && missing > 0 ? static_cast<uint32_t>(missing) : 0;
      optimizer_->extrapolate(Span<const float>(stored, n), state, ahead, Span<float>(out, n));
      if (lookahead_ && missing == 1) add_own_gradient(target - 1, l, out);
    });
  }

  // out -= lr x (own chunk of iteration t) / local workers: the step the
  // master will take for iteration t if every node sent what this one did.
  void add_own_gradient(int t, std::size_t l, float* out) {
    const auto& chunk = chunks_[static_cast<std::size_t>(t) % slots_][l];
    const float step = static_cast<float>(-ctx_.config.lr * lr_scale_at(ctx_.config, t) / ctx_.config.gpus_per_node);
    for (std::size_t j = 0; j < chunk.count; ++j) out[chunk.indices[j]] += step * chunk.values[j];
  }

  void layer_done(int t, std::size_t) {
    if (remaining_layers_[static_cast<std::size_t>(t)].fetch_sub(1) != 1) return;
    IterationRecord& r = records_[static_cast<std::size_t>(t)];
    r.pipeline_ms = detail::ms_since(ctx_.executor, backward_done_[static_cast<std::size_t>(t)]);
    pipeline_end_s_[static_cast<std::size_t>(t)] = std::chrono::duration<double>(ctx_.executor.now()).count();
    mark_event(t);
  }

  // An iteration's record is complete once its pipeline is done and the next
  // iteration has started (its start time ends this one's duration).
  void mark_event(int t) {
    const std::size_t i = static_cast<std::size_t>(t);
    // Two events: the pipeline's end, and the next iteration's start (for
    // the last iteration: its gradients' `done`, which the next start
    // otherwise implies). Layers now leave during backward, so a pipeline
    // can end before `done` has filled the record.
    const int needed = 2;
    if (events_[i].fetch_add(1) + 1 != needed) return;
    IterationRecord& r = records_[i];
    const double end_s = t + 1 < ctx_.config.iterations ? records_[i + 1].start_s : pipeline_end_s_[i];
    r.iteration_ms = (end_s - r.start_s) * 1e3;
    if (ctx_.control) ctx_.control->report(telemetry_of(t));
    ctx_.on_iteration_done(t, r);
    if (t + 1 == ctx_.config.iterations) ctx_.executor.post(finished_);
  }

  // What the controller needs from iteration t (core/telemetry).
  telemetry::NodeTelemetry telemetry_of(int t) {
    const std::size_t i = static_cast<std::size_t>(t);
    const IterationRecord& r = records_[i];
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
    out.density = densities_[i];
    out.batch = r.batch;
    out.gpu_compute_ms = worker_ms_[i];
    std::lock_guard<std::mutex> lock(record_mutex_);
    auto& intervals = exchanges_[i];
    std::sort(intervals.begin(), intervals.end());
    Nanos busy{0}, covered_to{0}, shortest = Nanos::max();
    for (const auto& [begin, end] : intervals) {  // the union of [begin, end)
      busy += std::max(Nanos{0}, end - std::max(begin, covered_to));
      covered_to = std::max(covered_to, end);
      shortest = std::min(shortest, end - begin);
    }
    out.exchange_busy_ms = std::chrono::duration<double, std::milli>(busy).count();
    out.exchange_shortest_ms = intervals.empty() ? 0 : std::chrono::duration<double, std::milli>(shortest).count();
    for (const auto& [begin, end] : intervals) {
      out.exchange_intervals_ms.push_back(std::chrono::duration<double, std::milli>(begin - intervals.front().first).count());
      out.exchange_intervals_ms.push_back(std::chrono::duration<double, std::milli>(end - intervals.front().first).count());
    }
    out.exchange_bytes = r.bytes_received;
    intervals.clear();
    intervals.shrink_to_fit();
    return out;
  }

  void add_ms(double& field, double ms) {
    std::lock_guard<std::mutex> lock(record_mutex_);
    field += ms;
  }

  NodeContext& ctx_;
  std::vector<std::size_t> numels_;
  std::vector<std::size_t> ks_;
  std::unique_ptr<compress::Compressor> compressor_;
  std::unique_ptr<optim::SparseOptimizer> optimizer_;
  std::vector<std::unique_ptr<compress::TensorState>> compress_states_;
  std::vector<std::unique_ptr<optim::ParamState>> optim_states_;
  std::size_t slots_ = 1;
  std::vector<std::vector<std::vector<float>>> grads_;          // [slot][layer]
  std::vector<std::vector<std::vector<float>>> staged_;         // [slot][layer]: what the forward used
  std::vector<std::vector<float>> current_;                     // [layer]: scratch of delay compensation
  bool predict_ = false, lookahead_ = false, delay_compensated_ = false, node_momentum_ = false;
  std::vector<std::size_t> compressed_;                         // [iteration]: layers compressed here
  std::map<int, runtime::Task> after_compress_;
  std::vector<std::vector<float>> velocity_;                    // [layer]: momentum at the node
  std::vector<std::vector<std::pair<Nanos, Nanos>>> exchanges_;  // [iteration]: each layer's exchange interval
  std::vector<double> densities_;                               // [iteration]
  std::vector<std::vector<double>> worker_ms_;                  // [iteration]: forward + backward per worker
  std::vector<std::vector<compress::SparseChunk>> chunks_;      // [slot][layer]
  std::vector<OrderedStage> compress_stage_, optimize_stage_;   // per layer
  OrderedStage exchange_order_;
  std::vector<IterationRecord> records_;
  std::vector<std::atomic<std::size_t>> remaining_layers_;
  std::vector<std::atomic<int>> events_;
  std::vector<Nanos> backward_done_;
  std::vector<double> pipeline_end_s_;
  std::mutex record_mutex_;
  float scale_ = 1.0f;
  runtime::Task finished_;
};

}  // namespace

std::unique_ptr<System> make_stellatrain_system(NodeContext& ctx) { return std::make_unique<StellaTrainSystem>(ctx); }

}  // namespace st::train
