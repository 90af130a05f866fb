#include "sim/sim_executor.h"

#include <fmt/format.h>
#include <ns3/core-module.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <exception>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace st::sim {
namespace {

using runtime::ComputeCost;
using runtime::Nanos;
using runtime::Task;
using HostClock = std::chrono::steady_clock;  // host cost accounting only, never engine time

double seconds_since(HostClock::time_point start) {
  return std::chrono::duration<double>(HostClock::now() - start).count();
}

// A progress mark reached inside a compute task's work (post_progress).
struct ProgressMark {
  int mark;
  HostClock::time_point reached;
  Task task;
};

struct PendingCompute {
  Task work;
  ComputeCost cost;
  Task done;
};

// One node's GPU (1 slot) or CPU (cpu_cores slots): FIFO.
struct Resource {
  int slots = 1;
  int busy = 0;
  std::deque<PendingCompute> queue;
};

class SimExecutorImpl final : public SimExecutor {
 public:
  SimExecutorImpl(std::unique_ptr<ComputeTimeModel> model, SimExecutorOptions options)
      : model_(std::move(model)), options_(options), start_(ns3::Simulator::Now()) {
    if (options_.cpu_cores < 0)
      throw std::invalid_argument(
          fmt::format("cpu_cores: must be at least 1, or 0 for the compute model's count, got {}", options_.cpu_cores));
    if (!(options_.stall_timeout_s > 0))
      throw std::invalid_argument(fmt::format("stall_timeout_s: must be positive, got {}", options_.stall_timeout_s));
  }

  Nanos now() const override { return Nanos((ns3::Simulator::Now() - start_).GetNanoSeconds()); }

  void post(Task task) override {
    if (deferred_) return deferred_->push_back([this, task = std::move(task)]() mutable { post(std::move(task)); });
    ns3::Simulator::ScheduleNow([this, task = std::move(task)] { run_task(task); });
  }

  void post_after(Nanos delay, Task task) override {
    if (deferred_)
      return deferred_->push_back([this, delay, task = std::move(task)]() mutable { post_after(delay, std::move(task)); });
    ns3::Simulator::Schedule(ns3::NanoSeconds(std::max<int64_t>(0, delay.count())),
                             [this, task = std::move(task)] { run_task(task); });
  }

  void compute(Task work, ComputeCost cost, Task done) override {
    if (deferred_) {
      return deferred_->push_back([this, work = std::move(work), cost, done = std::move(done)]() mutable {
        compute(std::move(work), cost, std::move(done));
      });
    }
    Resource& resource = resource_for(cost);
    resource.queue.push_back({std::move(work), std::move(cost), std::move(done)});
    // Start through an event so that compute() never runs work inside the caller.
    ns3::Simulator::ScheduleNow([this, &resource] { start_next(resource); });
  }

  void post_progress(int mark, Task task) override {
    if (!progress_) return post(std::move(task));
    progress_->push_back({mark, HostClock::now(), std::move(task)});
  }

  void run_until(const std::function<bool()>& finished) override {
    finished_ = &finished;
    const auto started = HostClock::now();
    watchdog_ = ns3::Simulator::Schedule(ns3::Seconds(options_.stall_timeout_s), [this] { check_progress(0); });
    if (!finished()) ns3::Simulator::Run();
    watchdog_.Cancel();
    host_.run_s += seconds_since(started);
    host_.simulated_s = std::chrono::duration<double>(now()).count();
    finished_ = nullptr;
    if (error_) {
      auto error = error_;
      error_ = nullptr;
      std::rethrow_exception(error);
    }
    if (!finished())
      throw std::runtime_error(fmt::format("simulation ran out of events at {:.6f} s (virtual) before the run "
                                           "finished: the run is deadlocked (a message or task never came)",
                                           std::chrono::duration<double>(now()).count()));
  }

  int workers() const override { return cpu_cores(0); }
  int cpu_cores(int node) const override { return runtime::cpu_slots(*model_, options_.cpu_cores, node); }
  std::string cpu_cores_source(int node) const override {
    if (options_.cpu_cores > 0) return "scenario";
    return model_->cpu_cores(node) > 0 ? model_->cpu_cores_origin(node) : "default";
  }
  HostCost host_cost() const override { return host_; }
  const ComputeTimeModel& compute_model() const override { return *model_; }

 private:
  Resource& resource_for(const ComputeCost& cost) {
    const auto key = std::make_pair(cost.node, cost.device);
    auto it = resources_.find(key);
    if (it != resources_.end()) return it->second;
    Resource r;
    // Tasks tied to no node never contend; a node's CPU has cpu_cores slots.
    r.slots = cost.node < 0 ? 1 << 30 : (cost.device < 0 ? cpu_cores(cost.node) : 1);
    return resources_.emplace(key, std::move(r)).first->second;
  }

  void start_next(Resource& resource) {
    while (resource.busy < resource.slots && !resource.queue.empty() && !stopped()) {
      PendingCompute task = std::move(resource.queue.front());
      resource.queue.pop_front();
      ++resource.busy;
      run_compute(resource, std::move(task));
    }
  }

  void run_compute(Resource& resource, PendingCompute task) {
    auto held = std::make_shared<std::vector<Task>>();
    std::vector<ProgressMark> marks;
    Nanos charged{0};
    const auto started = HostClock::now();
    deferred_ = held.get();
    progress_ = &marks;
    try {
      task.work();
      deferred_ = nullptr;
      progress_ = nullptr;
      const auto measured = std::chrono::duration_cast<Nanos>(HostClock::now() - started);
      host_.compute_s += std::chrono::duration<double>(measured).count();
      charged = model_->cost(task.cost, measured);
      schedule_marks(task.cost, started, measured, charged, marks);
    } catch (...) {
      deferred_ = nullptr;
      progress_ = nullptr;
      fail(std::current_exception());
      return;
    }
    ns3::Simulator::Schedule(ns3::NanoSeconds(charged.count()), [this, &resource, held, done = std::move(task.done)] {
      --resource.busy;
      for (auto& release : *held) release();
      run_task(done);
      start_next(resource);
    });
  }

  // Each mark at its share of the charged time; scheduled before the task's
  // end, so a mark at the very end still runs before `done`.
  void schedule_marks(const ComputeCost& cost, HostClock::time_point started, Nanos measured, Nanos charged,
                      std::vector<ProgressMark>& marks) {
    for (auto& m : marks) {
      const double measured_share =
          measured.count() > 0
              ? std::chrono::duration<double>(m.reached - started).count() / std::chrono::duration<double>(measured).count()
              : 1.0;
      const double share = std::clamp(model_->progress_share(cost, m.mark, measured_share), 0.0, 1.0);
      const auto at = static_cast<int64_t>(std::llround(share * static_cast<double>(charged.count())));
      ns3::Simulator::Schedule(ns3::NanoSeconds(at), [this, task = std::move(m.task)] { run_task(task); });
    }
  }

  void run_task(const Task& task) {
    if (stopped()) return;
    ++tasks_run_;
    const auto started = HostClock::now();
    try {
      task();
    } catch (...) {
      fail(std::current_exception());
    }
    host_.tasks_s += seconds_since(started);
    if (finished_ && (*finished_)()) ns3::Simulator::Stop();
  }

  bool stopped() const { return error_ != nullptr; }

  void check_progress(uint64_t tasks_before) {
    if (tasks_run_ == tasks_before) {
      fail(std::make_exception_ptr(std::runtime_error(fmt::format(
          "no engine task ran for {} s of virtual time (at {:.3f} s): the run is deadlocked, or a link is down "
          "for longer than stall_timeout_s",
          options_.stall_timeout_s, std::chrono::duration<double>(now()).count()))));
      return;
    }
    const uint64_t seen = tasks_run_;
    watchdog_ = ns3::Simulator::Schedule(ns3::Seconds(options_.stall_timeout_s), [this, seen] { check_progress(seen); });
  }

  void fail(std::exception_ptr error) {
    if (!error_) error_ = error;
    ns3::Simulator::Stop();
  }

  std::unique_ptr<ComputeTimeModel> model_;
  SimExecutorOptions options_;
  ns3::Time start_;
  std::map<std::pair<int, int>, Resource> resources_;
  std::vector<Task>* deferred_ = nullptr;  // set while a compute task's work runs
  std::vector<ProgressMark>* progress_ = nullptr;  // likewise
  const std::function<bool()>* finished_ = nullptr;
  std::exception_ptr error_;
  HostCost host_;
  uint64_t tasks_run_ = 0;
  ns3::EventId watchdog_;
};

}  // namespace

std::unique_ptr<SimExecutor> make_sim_executor(std::unique_ptr<ComputeTimeModel> model, SimExecutorOptions options) {
  if (!model) throw std::invalid_argument("make_sim_executor: no compute-time model");
  return std::make_unique<SimExecutorImpl>(std::move(model), options);
}

}  // namespace st::sim
