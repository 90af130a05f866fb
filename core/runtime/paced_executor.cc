#include "core/runtime/paced_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace st::runtime {
namespace {

double seconds(Nanos n) { return std::chrono::duration<double>(n).count(); }

// What a compute task's work posts or reports while it runs: held until the
// task's priced end (posts) or its marks' priced times (progress).
struct WorkContext {
  std::vector<Task> held;
  std::vector<std::pair<int, Nanos>> marks;  // mark, and when the work reached it
  std::vector<Task> mark_tasks;
};

// Set on a pool thread while a paced task's work runs there (work runs
// synchronously on one thread, so the thread names the task).
thread_local WorkContext* current_work = nullptr;

class PacedExecutorImpl final : public PacedExecutor {
 public:
  PacedExecutorImpl(std::unique_ptr<Executor> inner, std::shared_ptr<const ComputeTimeModel> model, int cpu_cores)
      : inner_(std::move(inner)), model_(std::move(model)), cpu_cores_(cpu_cores) {
    if (!inner_ || !model_) throw std::invalid_argument("paced executor: needs an executor and a compute-time model");
    if (!model_->deterministic())
      throw std::invalid_argument(fmt::format(
          "paced executor: the compute-time model must price the modelled hardware, not this machine (got {})",
          model_->describe().dump()));
    if (cpu_cores_ < 0) throw std::invalid_argument(fmt::format("cpu_cores: must be at least 0, got {}", cpu_cores_));
  }

  Nanos now() const override { return inner_->now(); }

  void post(Task task) override {
    if (current_work) return current_work->held.push_back([this, task = std::move(task)]() mutable { post(std::move(task)); });
    inner_->post(std::move(task));
  }

  void post_after(Nanos delay, Task task) override {
    if (current_work)
      return current_work->held.push_back(
          [this, delay, task = std::move(task)]() mutable { post_after(delay, std::move(task)); });
    inner_->post_after(delay, std::move(task));
  }

  void compute(Task work, ComputeCost cost, Task done) override {
    if (current_work)
      return current_work->held.push_back([this, work = std::move(work), cost, done = std::move(done)]() mutable {
        compute(std::move(work), cost, std::move(done));
      });
    const Nanos price = model_->cost(cost, Nanos::zero());
    const Nanos start = reserve(cost, price);
    inner_->post_after(start - now(), [this, work = std::move(work), cost, done = std::move(done), start, price] {
      run(work, cost, done, start, price);
    });
  }

  void post_progress(int mark, Task task) override {
    if (!current_work) return post(std::move(task));
    current_work->marks.emplace_back(mark, now());
    current_work->mark_tasks.push_back(std::move(task));
  }

  void run_until(const std::function<bool()>& finished) override { inner_->run_until(finished); }
  int workers() const override { return inner_->workers(); }

  PacingStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }
  const ComputeTimeModel& compute_model() const override { return *model_; }
  int cpu_cores(int node) const override { return cpu_slots(*model_, cpu_cores_, node); }

 private:
  // When the task may start: the earliest its resource has a slot free in
  // priced time (each slot's tasks back to back, first come, first served).
  Nanos reserve(const ComputeCost& cost, Nanos price) {
    const Nanos at = now();
    if (cost.node < 0) return at;  // tied to no node: never waits
    std::lock_guard<std::mutex> lock(mutex_);
    auto& slots = slots_[{cost.node, cost.device}];
    if (slots.empty()) slots.assign(cost.device < 0 ? cpu_cores(cost.node) : 1, Nanos::zero());
    auto slot = std::min_element(slots.begin(), slots.end());
    const Nanos start = std::max(at, *slot);
    *slot = start + price;
    return start;
  }

  void run(const Task& work, const ComputeCost& cost, const Task& done, Nanos start, Nanos price) {
    auto context = std::make_shared<WorkContext>();
    const Nanos began = now();
    current_work = context.get();
    try {
      work();
    } catch (...) {
      current_work = nullptr;
      throw;  // the pool reports it to run_until()
    }
    current_work = nullptr;
    const Nanos ended = now();
    const Nanos end = start + price;
    record(cost.kind, price, ended - began, ended - end);
    schedule_marks(*context, cost, began, ended, start, price);
    inner_->post_after(end - now(), [context, done] {
      for (auto& release : context->held) release();
      done();
    });
  }

  // Each mark at its priced share of the task, from where the work reached it.
  void schedule_marks(WorkContext& context, const ComputeCost& cost, Nanos began, Nanos ended, Nanos start,
                      Nanos price) {
    const double measured = seconds(ended - began);
    for (std::size_t i = 0; i < context.marks.size(); ++i) {
      const double measured_share = measured > 0 ? seconds(context.marks[i].second - began) / measured : 1.0;
      const double share = std::clamp(model_->progress_share(cost, context.marks[i].first, measured_share), 0.0, 1.0);
      const Nanos at = start + Nanos(std::llround(share * static_cast<double>(price.count())));
      inner_->post_after(at - now(), std::move(context.mark_tasks[i]));
    }
  }

  void record(TaskKind kind, Nanos price, Nanos work, Nanos late) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.add(price, work, late);
    stats_.by_kind.at(static_cast<std::size_t>(kind)).add(price, work, late);
  }

  std::unique_ptr<Executor> inner_;
  std::shared_ptr<const ComputeTimeModel> model_;
  const int cpu_cores_;
  mutable std::mutex mutex_;
  std::map<std::pair<int, int>, std::vector<Nanos>> slots_;  // (node, device) -> each slot's priced end
  PacingStats stats_;
};

}  // namespace

void PacingCounts::add(Nanos price, Nanos work, Nanos late) {
  ++tasks;
  priced_s += seconds(price);
  work_s += seconds(work);
  if (late > kPacingTolerance) {
    ++late_tasks;
    worst_late_ms = std::max(worst_late_ms, seconds(late) * 1e3);
  }
}

std::unique_ptr<PacedExecutor> make_paced_executor(std::unique_ptr<Executor> inner,
                                                   std::shared_ptr<const ComputeTimeModel> model, int cpu_cores) {
  return std::make_unique<PacedExecutorImpl>(std::move(inner), std::move(model), cpu_cores);
}

}  // namespace st::runtime
