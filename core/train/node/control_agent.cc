#include "core/train/node/control_agent.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/train/run/results.h"

namespace st::train {

ControlAgent::ControlAgent(int rank, int nodes, runtime::Executor& executor, telemetry::MeteredTransport& transport,
                           comm::Mailbox& mailbox, std::unique_ptr<control::Controller> controller, double density,
                           std::vector<int> batch, ResultsWriter* results, bool probe_at_start)
    : rank_(rank),
      nodes_(nodes),
      executor_(executor),
      transport_(transport),
      mailbox_(mailbox),
      controller_(std::move(controller)),
      results_(results),
      probe_at_start_(probe_at_start) {
  settings_[0] = Setting{density, std::move(batch)};
}

void ControlAgent::start(std::function<void()> begin_training) {
  if (rank_ == 0) {
    probe_sent_.assign(static_cast<std::size_t>(nodes_), runtime::Nanos(-1));
    probes_answered_.assign(static_cast<std::size_t>(nodes_), 0);
    const bool wait = probe_at_start_ && nodes_ > 1;
    if (wait) {  // before the receives: a peer already lost fails its receive inside recv()
      std::lock_guard<std::mutex> lock(mutex_);
      begin_training_ = std::move(begin_training);
    }
    for (int source = 1; source < nodes_; ++source) {
      receive_telemetry(source);
      receive_probe_replies(source);
    }
    if (wait) {
      std::lock_guard<std::mutex> lock(mutex_);
      send_probes();
    } else {
      begin_training();
    }
  } else {
    receive_plans();
    if (probe_at_start_) {
      answer_probes(kStartProbes, std::move(begin_training));
    } else {
      answer_probes();
      begin_training();
    }
  }
}

void ControlAgent::answer_probes(int before_training, std::function<void()> begin_training) {
  mailbox_.recv(0, telemetry::kProbeTag, [this, before_training, begin_training = std::move(begin_training)](
                                             std::exception_ptr error, comm::Message&& message) mutable {
    if (!error) transport_.send(0, telemetry::kProbeReplyTag, std::move(message.payload), nullptr);
    if (begin_training && (error || before_training <= 1)) {
      begin_training();
      begin_training = nullptr;
    }
    if (!error) answer_probes(before_training - 1, std::move(begin_training));
  });
}

void ControlAgent::receive_probe_replies(int source) {
  mailbox_.recv(source, telemetry::kProbeReplyTag, [this, source](std::exception_ptr error, comm::Message&&) {
    std::function<void()> begin_training;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto& sent = probe_sent_[static_cast<std::size_t>(source)];
      if (!error && sent.count() >= 0)
        controller_->on_round_trip(std::chrono::duration<double, std::milli>(executor_.now() - sent).count());
      sent = runtime::Nanos(-1);
      begin_training = count_start_probe(source, error != nullptr);
    }
    // Outside the lock: a reply already waiting runs its callback inside recv().
    if (begin_training) begin_training();
    if (!error) receive_probe_replies(source);
  });
}

std::function<void()> ControlAgent::count_start_probe(int node, bool failed) {
  if (!begin_training_) return nullptr;
  auto& answered = probes_answered_[static_cast<std::size_t>(node)];
  if (answered >= kStartProbes) return nullptr;
  if (!failed && ++answered < kStartProbes) {
    send_probe(node);
    return nullptr;
  }
  answered = kStartProbes;
  const bool all_answered = std::all_of(probes_answered_.begin() + 1, probes_answered_.end(),
                                        [](int n) { return n >= kStartProbes; });
  return all_answered ? std::exchange(begin_training_, nullptr) : nullptr;
}

// One probe per node at a time (under the agent's lock).
void ControlAgent::send_probes() {
  for (int r = 1; r < nodes_; ++r) send_probe(r);
}

void ControlAgent::send_probe(int node) {
  auto& sent = probe_sent_[static_cast<std::size_t>(node)];
  if (sent.count() >= 0) return;
  sent = executor_.now();
  transport_.send(node, telemetry::kProbeTag, std::vector<uint8_t>(8, 0), nullptr);
}

// Errors found on a transport thread surface as a failed executor task, so
// the run stops with the message instead of hanging.
void ControlAgent::fail(const std::string& what) {
  executor_.post([what] { throw std::runtime_error(what); });
}

void ControlAgent::receive_telemetry(int source) {
  mailbox_.recv(source, telemetry::kTelemetryTag, [this, source](std::exception_ptr error, comm::Message&& message) {
    if (error) return;  // the transport's own error handling reports a lost peer
    try {
      on_telemetry(telemetry::decode_telemetry(message.payload));
    } catch (const std::exception& e) {
      fail(fmt::format("controller: telemetry from rank {}: {}", source, e.what()));
      return;
    }
    receive_telemetry(source);
  });
}

void ControlAgent::receive_plans() {
  mailbox_.recv(0, telemetry::kPlanTag, [this](std::exception_ptr error, comm::Message&& message) {
    if (error) return;
    try {
      apply(control::decode_plan(message.payload));
    } catch (const std::exception& e) {
      fail(fmt::format("rank {}: controller plan: {}", rank_, e.what()));
      return;
    }
    receive_plans();
  });
}

// Rank 0: feed, tick, and announce under the agent's lock, so rank 0 cannot
// begin another iteration between reading its iteration and sending the plan.
void ControlAgent::on_telemetry(const telemetry::NodeTelemetry& t) {
  std::lock_guard<std::mutex> lock(mutex_);
  controller_->on_telemetry(t);
  const double now_s = std::chrono::duration<double>(executor_.now()).count();
  const std::size_t before = controller_->records().size();
  auto plan = controller_->tick(now_s, std::max(started_, 0));
  const bool ticked = controller_->records().size() > before;
  if (ticked && results_) results_->add_control(controller_->records().back());
  if (ticked || before == 0 || controller_->options().probe_every_iteration || setting_at(std::max(started_, 0)).drain)
    send_probes();
  if (!plan) return;
  spdlog::debug("controller: {}", plan->reason);
  const auto bytes = control::encode(*plan);
  for (int r = 1; r < nodes_; ++r) transport_.send(r, telemetry::kPlanTag, bytes, nullptr);
  add_settings(*plan, plan->batch.at(0));
}

void ControlAgent::add_settings(const control::Plan& plan, std::vector<int> batch) {
  const int from = plan.effective_iteration;
  // The first iteration this node has not begun, and not before the plan's
  // density_from: a density must hold for a node's whole iteration.
  const int density_from = plan.density_from > 0 ? std::min(from, std::max(plan.density_from, started_ + 1)) : from;
  const int drain_end = density_from + plan.drain_iterations;
  // Where the new schedule changes: its own steps, and the batches of the
  // settings it replaces before `from` (only the density moves early).
  std::map<int, std::vector<int>> steps;  // first iteration -> batch
  steps[density_from] = setting_at(density_from).batch;
  for (auto it = settings_.upper_bound(density_from); it != settings_.end() && it->first < from; ++it)
    steps[it->first] = it->second.batch;
  if (drain_end < from) steps[drain_end] = setting_at(drain_end).batch;
  steps[from] = batch;
  if (drain_end > from) steps[drain_end] = std::move(batch);
  settings_.erase(settings_.lower_bound(density_from), settings_.end());
  for (auto& [first, step_batch] : steps) {
    const bool drain = first < drain_end;
    settings_[first] = Setting{drain ? plan.drain_density : plan.density, std::move(step_batch), drain};
  }
}

void ControlAgent::apply(const control::Plan& plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (plan.effective_iteration <= started_)
    throw std::runtime_error(fmt::format("a plan for iteration {} arrived after iteration {} began here",
                                         plan.effective_iteration, started_));
  if (static_cast<int>(plan.batch.size()) != nodes_)
    throw std::runtime_error(fmt::format("the plan lists {} nodes, the run has {}", plan.batch.size(), nodes_));
  add_settings(plan, plan.batch.at(static_cast<std::size_t>(rank_)));
}

void ControlAgent::begin_iteration(int t) {
  std::lock_guard<std::mutex> lock(mutex_);
  started_ = std::max(started_, t);
}

const ControlAgent::Setting& ControlAgent::setting_at(int t) const {
  auto it = settings_.upper_bound(t);
  return std::prev(it)->second;  // settings_ holds iteration 0
}

double ControlAgent::density_at(int t) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return setting_at(t).density;
}

std::vector<int> ControlAgent::batch_at(int t) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return setting_at(t).batch;
}

void ControlAgent::report(telemetry::NodeTelemetry t) {
  const auto w = transport_.window_totals();
  t.window_sent = w.sent;
  t.window_received = w.received;
  t.window_s = std::chrono::duration<double>(w.span).count();
  if (rank_ == 0) {
    on_telemetry(t);
  } else {
    transport_.send(0, telemetry::kTelemetryTag, telemetry::encode(t), nullptr);
  }
}

}  // namespace st::train
