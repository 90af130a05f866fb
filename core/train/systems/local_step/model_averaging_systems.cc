// The systems whose clusters meet by averaging models (docs/systems.md):
// * local-sgd: post-local SGD as PyTorch's PostLocalSGDOptimizer and
//   PeriodicModelAverager run it. Inside a node the workers' gradients are
//   summed every step (PyTorch's intra-node subgroup allreduce); each node
//   steps on its own; every `averaging_period` steps a blocking allreduce
//   averages the full model over all nodes. The first
//   `start_iteration` steps are plain DDP (global gradient
//   allreduce). Momentum buffers stay local, as in PyTorch.
// * cloudless-ma: Cloudless-Training's inter-PS model averaging. Each
//   cluster trains synchronously on its own; every `averaging_period`
//   iterations (or every `averaging_period_s` seconds) the parameter
//   servers average their models. With `overlap` (the default) a
//   round runs while the cluster keeps training, and when it lands the
//   cluster adds (average - its snapshot) to its model, keeping the local
//   progress made meanwhile; a round that falls due while the previous one
//   is still in flight waits for it, and whole periods that passed during
//   a slow round (an outage) are skipped rather than made up, so a dead link
//   never stalls training.
//
// Clusters of unequal size: a model average weighs each node by its GPUs
// (its share of the samples), as PyTorch's averaging over one process per
// GPU does; with equal clusters that is the plain mean, computed as before.
//
// Every node must run the same rounds in the same order (they are ring
// allreduces). Round k starts, on each node, at the first iteration
// boundary at or after its due point where round k-1 has landed there; the
// due point of round k+1 is computed from round k's payload, which carries,
// besides the model, each node's lateness (iterations past the due point at
// which it started) and mean iteration time. Every node thus computes the
// same schedule, and a round is run iff its due point is at most the last
// iteration.

#include <algorithm>
#include <cmath>
#include <mutex>

#include "core/collective/ring_allreduce.h"
#include "core/train/systems/local_step/local_step_options.h"
#include "core/train/systems/local_step/local_step_system.h"
#include "core/train/systems/local_step/local_step_systems.h"

namespace st::train {
namespace {

using runtime::Nanos;

// Copies the master (or the gradients) out, allreduces, copies back: the
// copies are node CPU work priced like summing gradients.
runtime::ComputeCost copy_cost(const NodeContext& ctx, std::size_t elements) {
  return runtime::ComputeCost{runtime::TaskKind::kGather, -1, static_cast<double>(elements), ctx.rank, -1};
}

// The first total_numel() floats of a flat buffer (a model) x factor.
void scale_model_of(std::vector<float>& flat, std::size_t numel, float factor) {
  for (std::size_t i = 0; i < numel; ++i) flat[i] *= factor;
}

collective::AllreduceOptions sum_or_mean(bool average) {
  collective::AllreduceOptions options;
  options.average = average;
  return options;
}

class LocalSgdSystem final : public LocalStepSystem {
 public:
  explicit LocalSgdSystem(NodeContext& ctx)
      : LocalStepSystem(ctx), o_(ctx.config.options_as<LocalSgdOptions>()), flat_(total_numel()) {}
  std::string name() const override { return "local-sgd"; }

 protected:
  float step_scale(int t) const override { return warming_up(t) ? world_mean_scale() : node_mean_scale(); }

  // Warmup: DDP's global gradient allreduce (one flat buffer).
  void before_step(int t, IterationRecord& record, runtime::Task next) override {
    if (!warming_up(t)) return next();
    allreduce_flat([this] { flatten_gradients(); }, false, [this] { unflatten_gradients(); }, record, next);
  }

  void after_step(int t, IterationRecord& record, runtime::Task next) override {
    const int local_steps = t + 1 - o_.start_iteration;
    if (local_steps <= 0 || local_steps % o_.averaging_period != 0) return next();
    ++rounds_;
    if (!ctx_.config.unequal_gpus()) {
      allreduce_flat([this] { copy_master_to(flat_.data()); }, true, [this] { copy_master_from(flat_.data()); },
                     record, next);
      return;
    }
    allreduce_flat(
        [this] {
          copy_master_to(flat_.data());
          scale_model(flat_.data(), static_cast<float>(ctx_.config.gpus_of(ctx_.rank)));
        },
        false,
        [this] {
          scale_model(flat_.data(), 1.0f / static_cast<float>(ctx_.config.total_workers()));
          copy_master_from(flat_.data());
        },
        record, next);
  }

  nlohmann::json stats() const override { return {{"averaging_rounds", rounds_}}; }

 private:
  bool warming_up(int t) const { return t < o_.start_iteration; }
  void scale_model(float*, float factor) { scale_model_of(flat_, total_numel(), factor); }

  // fill flat_ (a compute task), ring-allreduce it (sum or mean), empty it
  // (a compute task), then `next`; traffic and time go to `record`.
  void allreduce_flat(runtime::Task fill, bool average, runtime::Task empty, IterationRecord& record,
                      runtime::Task next) {
    const Nanos start = ctx_.executor.now();
    const auto cost = copy_cost(ctx_, total_numel());
    ctx_.executor.compute(std::move(fill), cost, [this, average, empty, cost, &record, start, next] {
      collective::ring_allreduce(
          ctx_.comm, flat_.data(), flat_.size(), sum_or_mean(average),
          [this, empty, cost, &record, start, next](std::exception_ptr error, const collective::CollectiveStats& s) {
            if (error) std::rethrow_exception(error);
            record.bytes_sent += s.bytes_sent;
            record.bytes_received += s.bytes_received;
            record.exchange_ms += detail::ms_since(ctx_.executor, start);
            ctx_.executor.compute(empty, cost, next);
          });
    });
  }

  void flatten_gradients() {
    float* out = flat_.data();
    for (const auto& g : grads()) out = std::copy(g.begin(), g.end(), out);
  }
  void unflatten_gradients() {
    const float* in = flat_.data();
    for (auto& g : grads()) {
      std::copy(in, in + g.size(), g.begin());
      in += g.size();
    }
  }

  const LocalSgdOptions& o_;
  std::vector<float> flat_;
  int rounds_ = 0;
};

class CloudlessMaSystem final : public LocalStepSystem {
 public:
  explicit CloudlessMaSystem(NodeContext& ctx)
      : LocalStepSystem(ctx),
        o_(ctx.config.options_as<CloudlessMaOptions>()),
        nodes_(static_cast<std::size_t>(ctx.config.nodes)),
        payload_(total_numel() + 2 * nodes_),
        snapshot_(total_numel()),
        due_(o_.averaging_period) {}
  std::string name() const override { return "cloudless-ma"; }

 protected:
  float step_scale(int) const override { return node_mean_scale(); }

  void after_step(int t, IterationRecord& record, runtime::Task next) override {
    const int done = t + 1;
    if (!landed()) return maybe_start_round(done, record, next);
    apply_round(done, record, [this, done, &record, next] { maybe_start_round(done, record, next); });
  }

  // Every round due up to the last iteration is run (and applied) before
  // the node reports that it has finished; their traffic joins the last
  // iteration's record.
  void drain(IterationRecord& last, runtime::Task next) override {
    const int done = ctx_.config.iterations;
    if (in_flight_) {
      wait_for_landing([this, done, &last, next] {
        apply_round(done, drain_record_, [this, &last, next] { drain(last, next); });
      });
      return;
    }
    if (due_ <= done) return start_round(done, drain_record_, [this, &last, next] { drain(last, next); });
    last.bytes_sent += drain_record_.bytes_sent;
    last.bytes_received += drain_record_.bytes_received;
    next();
  }

  nlohmann::json stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return {{"averaging_rounds", rounds_applied_},
            {"averaging_periods_skipped", periods_skipped_},
            {"max_staleness", max_age_},
            {"mean_staleness", rounds_applied_ ? static_cast<double>(age_sum_) / rounds_applied_ : 0.0}};
  }

 private:
  bool landed() {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_flight_ && landed_;
  }

  void maybe_start_round(int done, IterationRecord& record, runtime::Task next) {
    if (in_flight_ || due_ > done) return next();
    start_round(done, record, [this, done, &record, next] {
      if (o_.overlap) return next();
      wait_for_landing([this, done, &record, next] { apply_round(done, record, next); });
    });
  }

  // Snapshots the model into the payload with this node's lateness and mean
  // iteration time, then starts the allreduce; `started` runs at once after.
  void start_round(int done, IterationRecord&, runtime::Task started) {
    const std::size_t p = total_numel();
    const double mean_iteration_ms =
        done > 0 ? std::chrono::duration<double, std::milli>(ctx_.executor.now()).count() / done : 0.0;
    ctx_.executor.compute(
        [this, p, done, mean_iteration_ms] {
          copy_master_to(payload_.data());
          std::copy(payload_.begin(), payload_.begin() + static_cast<std::ptrdiff_t>(p), snapshot_.begin());
          std::fill(payload_.begin() + static_cast<std::ptrdiff_t>(p), payload_.end(), 0.0f);
          if (ctx_.config.unequal_gpus()) scale_model_of(payload_, p, static_cast<float>(ctx_.config.gpus_of(ctx_.rank)));
          payload_[p + static_cast<std::size_t>(ctx_.rank)] = static_cast<float>(done - due_);
          payload_[p + nodes_ + static_cast<std::size_t>(ctx_.rank)] = static_cast<float>(mean_iteration_ms);
        },
        copy_cost(ctx_, p), [this, done, started] {
          {
            std::lock_guard<std::mutex> lock(mutex_);
            in_flight_ = true;
            landed_ = false;
            round_started_done_ = done;
            round_started_at_ = ctx_.executor.now();
          }
          collective::ring_allreduce(ctx_.comm, payload_.data(), payload_.size(), sum_or_mean(false),
                                     [this](std::exception_ptr error, const collective::CollectiveStats& s) {
                                       if (error) std::rethrow_exception(error);
                                       on_landed(s);
                                     });
          started();
        });
  }

  void on_landed(const collective::CollectiveStats& s) {
    runtime::Task waiter;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      landed_ = true;
      round_stats_ = s;
      round_ms_ = detail::ms_since(ctx_.executor, round_started_at_);
      waiter = std::move(waiter_);
      waiter_ = nullptr;
    }
    if (waiter) waiter();
  }

  void wait_for_landing(runtime::Task next) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!landed_) {
        waiter_ = std::move(next);
        return;
      }
    }
    next();
  }

  // Moves the model by (average - snapshot) and computes the next due point.
  void apply_round(int done, IterationRecord& record, runtime::Task next) {
    const std::size_t p = total_numel();
    ctx_.executor.compute(
        [this, p] {
          // The mean over nodes, each weighed by its GPUs when they differ.
          const float n = static_cast<float>(ctx_.config.unequal_gpus() ? ctx_.config.total_workers() : nodes_);
          for (std::size_t i = 0; i < p; ++i) payload_[i] /= n;
          // Blocking rounds: nothing moved since the snapshot, so the
          // average is taken as is (bitwise, rather than w + (avg - w)).
          if (o_.overlap) add_difference_to_master(payload_.data(), snapshot_.data());
          else copy_master_from(payload_.data());
        },
        copy_cost(ctx_, p), [this, p, done, &record, next] {
          std::lock_guard<std::mutex> lock(mutex_);
          const int age = done - round_started_done_;
          record.staleness = age;
          record.exchange_ms += round_ms_;
          record.bytes_sent += round_stats_.bytes_sent;
          record.bytes_received += round_stats_.bytes_received;
          ++rounds_applied_;
          age_sum_ += age;
          max_age_ = std::max(max_age_, age);
          schedule_next_round(p);
          in_flight_ = false;
          landed_ = false;
          ctx_.executor.post(next);
        });
  }

  // From the landed payload, identical on every node.
  void schedule_next_round(std::size_t p) {
    float slowest_ms = 0, latest = 0;
    for (std::size_t i = 0; i < nodes_; ++i) {
      latest = std::max(latest, payload_[p + i]);
      slowest_ms = std::max(slowest_ms, payload_[p + nodes_ + i]);
    }
    int period = o_.averaging_period;
    if (o_.averaging_period_s > 0 && slowest_ms > 0)
      period = std::max(1, static_cast<int>(std::lround(o_.averaging_period_s * 1e3 / slowest_ms)));
    const int skipped = static_cast<int>(latest) / period;
    periods_skipped_ += skipped;
    due_ += period * (1 + skipped);
  }

  const CloudlessMaOptions& o_;
  const std::size_t nodes_;
  std::vector<float> payload_;   // model, then N latenesses, then N mean iteration times
  std::vector<float> snapshot_;  // this node's model when the round started
  IterationRecord drain_record_;  // rounds applied after the last iteration
  mutable std::mutex mutex_;
  bool in_flight_ = false, landed_ = false;
  int due_;  // iterations done at which the next round falls due
  int round_started_done_ = 0;
  Nanos round_started_at_{0};
  double round_ms_ = 0;
  collective::CollectiveStats round_stats_;
  runtime::Task waiter_;
  int rounds_applied_ = 0, periods_skipped_ = 0, max_age_ = 0;
  long long age_sum_ = 0;
};

}  // namespace

SystemDescriptor local_sgd_system() {
  return describe_system<LocalSgdOptions, LocalSgdSystem>(
      "local-sgd",
      "Post-local SGD: each cluster steps alone, models averaged every averaging_period iterations");
}

SystemDescriptor cloudless_ma_system() {
  return describe_system<CloudlessMaOptions, CloudlessMaSystem>(
      "cloudless-ma",
      "Cloudless-Training's inter-PS model averaging, overlapped with training");
}

}  // namespace st::train
