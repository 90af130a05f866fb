// The step loop shared by both gradient engines: local worker threads,
// forward/loss/backward, the engine's wait, SGD, telemetry.
#include "core/c10d/gloo_ddp.h"

#include <torch/csrc/distributed/c10d/comm.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/torch.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <thread>

#include "core/c10d/gloo_group_state.h"
#include "core/c10d/gradient_sync.h"
#include "core/data/dataset.h"

namespace st::c10d_ddp {
namespace {

using SteadyClock = std::chrono::steady_clock;

double ms_between(SteadyClock::time_point from, SteadyClock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

// DDP's _sync_module_states broadcasts in 250 MiB coalesced chunks.
constexpr size_t kBroadcastBucketBytes = 250 * 1024 * 1024;

// When the last parameter gradient of a step was produced, on any worker:
// the boundary between backward compute and exposed allreduce wait.
class LastGradientClock {
 public:
  void reset() { last_ns_.store(0); }
  void touch() {
    const int64_t now = SteadyClock::now().time_since_epoch().count();
    int64_t seen = last_ns_.load();
    while (seen < now && !last_ns_.compare_exchange_weak(seen, now)) {
    }
  }
  // `fallback` when no gradient was produced this step.
  SteadyClock::time_point last(SteadyClock::time_point fallback) const {
    const int64_t ns = last_ns_.load();
    return ns == 0 ? fallback : SteadyClock::time_point(SteadyClock::duration(ns));
  }

 private:
  std::atomic<int64_t> last_ns_{0};
};

GradientEngine resolve_engine(GradientEngine requested, int local_workers, bool unequal_ranks) {
  if (requested == GradientEngine::kAuto)
    return local_workers == 1 && !unequal_ranks ? GradientEngine::kReducer : GradientEngine::kBucketedAllreduce;
  if (requested == GradientEngine::kReducer && unequal_ranks)
    throw std::invalid_argument(
        "GlooDdp: c10d::Reducer averages over ranks, not over ranks of unequal worker counts; use kBucketedAllreduce "
        "(or kAuto)");
  if (requested == GradientEngine::kReducer && local_workers != 1)
    throw std::invalid_argument(fmt::format(
        "GlooDdp: c10d::Reducer handles one replica per process, got {} local workers; use kBucketedAllreduce "
        "(or kAuto)",
        local_workers));
  return requested;
}

void check_replicas_match(const std::vector<model::Model>& replicas) {
  if (replicas.empty()) throw std::invalid_argument("GlooDdp: needs at least one replica");
  const auto reference = replicas[0].parameters();
  if (reference.empty()) throw std::invalid_argument("GlooDdp: model " + replicas[0].name() + " has no parameters");
  for (std::size_t g = 1; g < replicas.size(); ++g) {
    const auto parameters = replicas[g].parameters();
    bool same = parameters.size() == reference.size();
    for (std::size_t i = 0; same && i < parameters.size(); ++i)
      same = parameters[i].sizes() == reference[i].sizes() && parameters[i].dtype() == reference[i].dtype();
    if (!same)
      throw std::invalid_argument(fmt::format("GlooDdp: replica {} ({}) does not match replica 0 ({})", g,
                                              replicas[g].name(), replicas[0].name()));
    if (parameters[0].unsafeGetTensorImpl() == reference[0].unsafeGetTensorImpl())
      throw std::invalid_argument(fmt::format("GlooDdp: replica {} shares its parameters with replica 0", g));
  }
}

std::vector<at::Tensor> buffers_of(const model::Model& model) {
  std::vector<at::Tensor> buffers;
  for (const model::NamedTensor& buffer : model.named_buffers()) buffers.push_back(buffer.tensor);
  return buffers;
}

void copy_into(const std::vector<at::Tensor>& destination, const std::vector<at::Tensor>& source) {
  torch::NoGradGuard no_grad;
  for (std::size_t i = 0; i < destination.size(); ++i) destination[i].copy_(source[i]);
}

std::string describe(const std::exception& error) {
  if (const auto* c10_error = dynamic_cast<const c10::Error*>(&error)) return c10_error->what_without_backtrace();
  return error.what();
}

}  // namespace

std::string collective_failure(const GlooGroupState& group, const std::string& what, const std::exception& error) {
  return fmt::format("ddp-gloo: {} failed on rank {} of {} (master {}:{}, timeout {} ms): {}", what, group.options.rank,
                     group.options.world_size, group.options.master_addr, group.options.master_port,
                     group.options.timeout.count(), describe(error));
}

const char* engine_name(GradientEngine engine) {
  switch (engine) {
    case GradientEngine::kAuto:
      return "auto";
    case GradientEngine::kReducer:
      return "reducer";
    case GradientEngine::kBucketedAllreduce:
      return "bucketed-allreduce";
  }
  return "?";
}

struct GlooDdp::Impl {
  Impl(const GlooGroupState& group, std::vector<model::Model> models, const GlooDdpOptions& options);
  ~Impl();

  void broadcast_from_rank_zero(const std::vector<at::Tensor>& tensors);
  void sync_buffers();
  double run_worker(int worker, const data::Batch& batch);
  std::vector<double> run_local_workers(const std::vector<data::Batch>& batches);
  StepTelemetry step(const std::vector<data::Batch>& batches);

  const GlooGroupState& group;
  std::vector<model::Model> replicas;
  std::vector<std::vector<at::Tensor>> parameters;  // [worker][parameter]
  std::vector<std::vector<at::Tensor>> buffers;     // [worker][buffer]
  std::unique_ptr<GradientSync> sync;
  torch::optim::SGD optimizer;
  LastGradientClock last_gradient;
  std::vector<std::pair<std::size_t, unsigned>> clock_hooks;  // (worker * P + parameter, hook)
  int64_t gradient_bytes = 0;
  // Filled by worker 0 during a step.
  SteadyClock::time_point backward_start;
  double forward_ms = 0.0;
};

GlooDdp::Impl::Impl(const GlooGroupState& group_state, std::vector<model::Model> models, const GlooDdpOptions& options)
    : group(group_state),
      replicas(std::move(models)),
      optimizer(replicas.at(0).parameters(), torch::optim::SGDOptions(options.sgd.lr)
                                                 .momentum(options.sgd.momentum)
                                                 .weight_decay(options.sgd.weight_decay)) {
  for (const model::Model& replica : replicas) {
    parameters.push_back(replica.parameters());
    buffers.push_back(buffers_of(replica));
  }
  for (const at::Tensor& parameter : parameters[0]) gradient_bytes += parameter.numel() * parameter.element_size();
  if (options.comm_hook == CommHook::kFp16Compress) gradient_bytes /= 2;  // the hook allreduces halves
  if (options.broadcast_initial_state) {
    try {
      ::c10d::verify_params_across_processes(group.process_group, parameters[0], c10::nullopt);
    } catch (const std::exception& error) {
      throw std::runtime_error(collective_failure(group, "parameter shape check across ranks", error));
    }
    std::vector<at::Tensor> state = parameters[0];
    state.insert(state.end(), buffers[0].begin(), buffers[0].end());
    broadcast_from_rank_zero(state);
  }
  for (std::size_t g = 1; g < replicas.size(); ++g) {
    copy_into(parameters[g], parameters[0]);
    copy_into(buffers[g], buffers[0]);
  }
  sync = options.engine == GradientEngine::kReducer ? make_reducer_sync(group, parameters[0], options)
                                                    : make_bucketed_allreduce_sync(group, parameters, options);
  const std::size_t count = parameters[0].size();
  for (std::size_t g = 0; g < parameters.size(); ++g)
    for (std::size_t i = 0; i < count; ++i)
      clock_hooks.emplace_back(g * count + i,
                               parameters[g][i].register_hook([this](const at::Tensor&) { last_gradient.touch(); }));
}

GlooDdp::Impl::~Impl() {
  const std::size_t count = parameters[0].size();
  for (const auto& [flat_index, hook] : clock_hooks)
    parameters[flat_index / count][flat_index % count].remove_hook(hook);
}

void GlooDdp::Impl::broadcast_from_rank_zero(const std::vector<at::Tensor>& tensors) {
  if (tensors.empty()) return;
  torch::NoGradGuard no_grad;
  try {
    ::c10d::broadcast_coalesced(group.process_group, tensors, kBroadcastBucketBytes, /*rank=*/0);
  } catch (const std::exception& error) {
    throw std::runtime_error(collective_failure(group, "broadcast of rank 0's parameters/buffers", error));
  }
}

// DDP's broadcast_buffers=True: every forward starts from rank 0's buffers
// (BatchNorm running statistics); local replicas copy replica 0's.
void GlooDdp::Impl::sync_buffers() {
  if (buffers[0].empty()) return;
  broadcast_from_rank_zero(buffers[0]);
  for (std::size_t g = 1; g < buffers.size(); ++g) copy_into(buffers[g], buffers[0]);
}

double GlooDdp::Impl::run_worker(int worker, const data::Batch& batch) {
  const auto forward_start = SteadyClock::now();
  const model::Model& replica = replicas[worker];
  const at::Tensor loss = torch::nn::functional::cross_entropy(replica.forward(batch.images), batch.labels);
  sync->before_backward(worker);
  if (worker == 0) {
    backward_start = SteadyClock::now();
    forward_ms = ms_between(forward_start, backward_start);
  }
  try {
    loss.backward();
  } catch (const std::exception& error) {
    throw std::runtime_error(collective_failure(group, fmt::format("backward of local worker {}", worker), error));
  }
  return loss.item<double>();
}

// Worker 0 runs on the calling thread, the others on threads of their own
// (autograd runs a CPU backward on the thread that calls it). All are joined
// before the first failure, if any, is rethrown.
std::vector<double> GlooDdp::Impl::run_local_workers(const std::vector<data::Batch>& batches) {
  const int workers = static_cast<int>(replicas.size());
  std::vector<double> losses(workers, 0.0);
  std::vector<std::exception_ptr> failures(workers);
  auto run = [&](int worker) {
    try {
      losses[worker] = run_worker(worker, batches[worker]);
    } catch (...) {
      failures[worker] = std::current_exception();
    }
  };
  std::vector<std::thread> helpers;
  for (int g = 1; g < workers; ++g) helpers.emplace_back(run, g);
  run(0);
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
  return losses;
}

StepTelemetry GlooDdp::Impl::step(const std::vector<data::Batch>& batches) {
  for (const model::Model& replica : replicas) replica.zero_grad();
  sync_buffers();
  sync->before_forward();
  last_gradient.reset();

  const std::vector<double> losses = run_local_workers(batches);
  sync->after_backward();
  const auto reduced = SteadyClock::now();
  optimizer.step();
  for (std::size_t g = 1; g < replicas.size(); ++g) copy_into(parameters[g], parameters[0]);
  const auto stepped = SteadyClock::now();

  StepTelemetry telemetry;
  for (double loss : losses) telemetry.loss += loss / losses.size();
  const auto last = last_gradient.last(backward_start);
  telemetry.forward_ms = forward_ms;
  telemetry.backward_ms = ms_between(backward_start, last);
  telemetry.allreduce_wait_ms = ms_between(last, reduced);
  telemetry.optimizer_ms = ms_between(reduced, stepped);
  telemetry.bytes_allreduced = gradient_bytes;
  return telemetry;
}

GlooDdp::GlooDdp(GlooGroup group, std::vector<model::Model> replicas, GlooDdpOptions options)
    : group_(std::move(group)) {
  check_replicas_match(replicas);
  if (options.bucket_cap_bytes <= 0 || options.first_bucket_cap_bytes <= 0)
    throw std::invalid_argument("GlooDdp: bucket caps must be positive");
  // Decided before any collective runs, so a bad choice fails on every rank alike.
  options.engine = resolve_engine(options.engine, static_cast<int>(replicas.size()), options.workers_in_job > 0);
  if (options.comm_hook != CommHook::kNone && options.engine != GradientEngine::kReducer)
    throw std::invalid_argument(fmt::format(
        "GlooDdp: a communication hook needs the c10d::Reducer engine (one local worker), got {} local workers",
        replicas.size()));
  impl_ = std::make_unique<Impl>(*group_.state(), std::move(replicas), options);
}

GlooDdp::~GlooDdp() = default;

double GlooDdp::train_step(const data::Batch& batch) { return train_step(std::vector<data::Batch>{batch}); }

double GlooDdp::train_step(const std::vector<data::Batch>& batches) {
  if (batches.size() != impl_->replicas.size())
    throw std::invalid_argument(fmt::format("GlooDdp::train_step: got {} batches for {} local workers", batches.size(),
                                            impl_->replicas.size()));
  StepTelemetry step = impl_->step(batches);
  step.buckets = static_cast<int>(impl_->sync->bucket_layout().size());
  record(step);
  return step.loss;
}

void GlooDdp::record(const StepTelemetry& step) {
  last_step_ = step;
  ++totals_.steps;
  totals_.forward_ms += step.forward_ms;
  totals_.backward_ms += step.backward_ms;
  totals_.allreduce_wait_ms += step.allreduce_wait_ms;
  totals_.optimizer_ms += step.optimizer_ms;
  totals_.bytes_allreduced += step.bytes_allreduced;
}

void GlooDdp::set_lr(double lr) {
  for (auto& group : impl_->optimizer.param_groups())
    static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
}

GradientEngine GlooDdp::engine() const { return impl_->sync->engine(); }
int GlooDdp::local_workers() const { return static_cast<int>(impl_->replicas.size()); }
std::vector<std::vector<std::size_t>> GlooDdp::bucket_layout() const { return impl_->sync->bucket_layout(); }

}  // namespace st::c10d_ddp
