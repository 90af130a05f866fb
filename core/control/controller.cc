#include "core/control/controller.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace st::control {

void validate(const ControllerOptions& o) {
  auto require = [](bool ok, const char* name, double value) {
    if (!ok) throw std::invalid_argument(fmt::format("controller: {} = {} is out of range", name, value));
  };
  require(o.interval_s > 0, "interval_s", o.interval_s);
  require(o.early_ticks >= 1, "early_ticks", o.early_ticks);
  require(o.min_density > 0 && o.min_density <= 1, "min_density", o.min_density);
  require(o.max_density >= o.min_density && o.max_density <= 1, "max_density", o.max_density);
  require(o.safety > 0 && o.safety <= 1, "safety", o.safety);
  require(o.batch_hysteresis >= 0, "batch_hysteresis", o.batch_hysteresis);
  require(o.density_hysteresis >= 0, "density_hysteresis", o.density_hysteresis);
  require(o.raised_density_iterations >= 0, "raised_density_iterations", o.raised_density_iterations);
  require(o.link_utilization >= 0 && o.link_utilization < 1, "link_utilization", o.link_utilization);
  require(o.sparsity_cost >= 0 && std::isfinite(o.sparsity_cost), "sparsity_cost", o.sparsity_cost);
  require(o.drain_every_ticks >= 0, "drain_every_ticks", o.drain_every_ticks);
  require(o.drain_iterations >= 1, "drain_iterations", o.drain_iterations);
  if (o.sparsity_cost > 0 && o.link_utilization > 0)
    throw std::invalid_argument(fmt::format(
        "controller: link_utilization = {} and sparsity_cost = {} are two density rules; set one", o.link_utilization,
        o.sparsity_cost));
  BandwidthEstimator check(o.estimator);  // throws for bad estimator options
  (void)check;
}

Controller::Controller(ControllerOptions options, TrafficModel traffic, std::vector<std::vector<int>> batch,
                       double density, int staleness)
    : options_(options),
      traffic_(std::move(traffic)),
      batch_(std::move(batch)),
      density_(std::clamp(density, options.min_density, options.max_density)),
      staleness_(staleness),
      estimator_(options.estimator, static_cast<int>(batch_.size())),
      // The first tick comes early: the first iterations matter most for
      // convergence and a few of them already show compute time and latency.
      next_tick_s_(options.interval_s / 4) {
  validate(options_);
  gpus_.resize(batch_.size());
  for (std::size_t n = 0; n < batch_.size(); ++n) gpus_[n].resize(batch_[n].size());
  compute_sum_ms_.assign(batch_.size(), 0);
  compute_count_.assign(batch_.size(), 0);
}

void Controller::on_telemetry(const telemetry::NodeTelemetry& t) {
  if (t.rank < 0 || t.rank >= static_cast<int>(gpus_.size()) || t.batch.size() != gpus_[t.rank].size())
    throw telemetry::TelemetryError(fmt::format("telemetry from rank {} does not match the run ({} nodes)", t.rank,
                                                gpus_.size()));
  ExchangeSample s;
  s.busy_ms = t.exchange_busy_ms;
  s.shortest_ms = t.exchange_shortest_ms;
  for (std::size_t i = 0; i + 1 < t.exchange_intervals_ms.size(); i += 2)
    s.intervals.emplace_back(t.exchange_intervals_ms[i], t.exchange_intervals_ms[i + 1]);
  s.bytes = static_cast<double>(t.exchange_bytes);
  // The first iterations wait while the pipeline fills and TCP opens its
  // window, and a density warm-up's wait for what it adds to the plan:
  // neither is a sign that the exchange overran.
  const bool start_up = t.iteration <= staleness_ + 1;
  const bool warming_up = t.iteration < options_.raised_density_iterations;
  s.wait_ms = start_up || warming_up ? 0 : t.wait_ms;
  s.backward_ms = t.backward_ms;
  s.iteration = t.iteration;
  s.node = t.rank;
  s.density = t.density;
  s.origin_ms = t.exchange_origin_ms;
  estimator_.add(s);
  double slowest_gpu = 0;
  for (std::size_t g = 0; g < t.batch.size(); ++g) {
    gpus_[t.rank][g].add(t.batch[g], t.gpu_compute_ms[g]);
    slowest_gpu = std::max(slowest_gpu, t.gpu_compute_ms[g]);
  }
  compute_sum_ms_[t.rank] += slowest_gpu + t.gather_ms + (options_.window_includes_load ? t.load_ms : 0);
  ++compute_count_[t.rank];
  if (t.rank == 0 && t.window_s > 0) {
    const double bytes = std::accumulate(t.window_received.begin(), t.window_received.end(), 0.0);
    delivered_mbps_ = bytes * 8 / t.window_s / 1e6;
  }
}

// The pace the exchange overlaps with: the slowest node's mean compute.
double Controller::compute_ms() const {
  double slowest = 0;
  for (std::size_t n = 0; n < compute_count_.size(); ++n)
    if (compute_count_[n] > 0) slowest = std::max(slowest, compute_sum_ms_[n] / compute_count_[n]);
  return slowest;
}

std::optional<std::vector<std::vector<int>>> Controller::better_batches() const {
  std::vector<GpuThroughputModel> flat;
  std::vector<int> current;
  for (std::size_t n = 0; n < gpus_.size(); ++n)
    for (std::size_t g = 0; g < gpus_[n].size(); ++g) {
      if (gpus_[n][g].empty()) return std::nullopt;
      flat.push_back(gpus_[n][g]);
      current.push_back(batch_[n][g]);
    }
  const int global = std::accumulate(current.begin(), current.end(), 0);
  const auto proposed = allocate_batches(flat, global);
  auto slowest = [&](const std::vector<int>& b) {
    double worst = 0;
    for (std::size_t i = 0; i < flat.size(); ++i) worst = std::max(worst, flat[i].predicted_ms(b[i]));
    return worst;
  };
  if (slowest(proposed) > slowest(current) * (1 - options_.batch_hysteresis)) return std::nullopt;
  std::vector<std::vector<int>> out = batch_;
  std::size_t i = 0;
  for (auto& node : out)
    for (int& b : node) b = proposed[i++];
  return out;
}

// The transfer time X that keeps the link busy `link_utilization` (u > 0)
// of each iteration. An iteration lasts P(X) = max(C, (C + E + X) / (s + 1)) for
// compute C, exchange latency E and staleness s (bandwidth_estimator.h,
// ExchangePace). While the compute sets the pace, X = u C; once the round
// trip does, X / P(X) = u gives X = u (C + E) / (s + 1 - u). The two meet
// where (C + E + u C) = (s + 1) C.
double Controller::link_filling_ms(double compute_ms, double exchange_latency_ms) const {
  const double u = options_.link_utilization;
  const double s = staleness_;
  if (compute_ms + exchange_latency_ms + u * compute_ms <= (s + 1) * compute_ms) return u * compute_ms;
  return u * (compute_ms + exchange_latency_ms) / (s + 1 - u);
}

// The paper's rule: the largest density whose bytes fit the compute window
// less the latency (with link_utilization, at least the link-filling time).
DensityChoice Controller::paper_choice(ControlRecord& r, const ExchangePace& pace, std::string& why) const {
  r.budget_ms = (r.compute_ms - r.latency_ms) * options_.safety;
  if (options_.link_utilization > 0) {
    const double fill_ms = link_filling_ms(r.compute_ms, pace.latency_hops * r.latency_ms);
    if (fill_ms > r.budget_ms) {
      r.budget_ms = fill_ms;
      why += fmt::format("; filling the link to {:.0f}%", options_.link_utilization * 100);
    }
  }
  return choose_density(traffic_, r.estimated_mbps, r.budget_ms, options_.min_density, options_.max_density);
}

// The soonest-target rule (soonest_density.h). The safety margin scales the
// bandwidth: the transfer times it plans are those of a link `safety` times
// the estimate, as the paper's rule plans for `safety` of the window.
DensityChoice Controller::soonest_choice(ControlRecord& r, const ExchangePace& pace, std::string& why) const {
  const IterationPace p{r.compute_ms, pace.latency_hops * r.latency_ms, staleness_};
  const auto soonest = soonest_density(traffic_, r.estimated_mbps * options_.safety, p, options_.sparsity_cost,
                                       options_.min_density, options_.max_density);
  r.budget_ms = soonest.choice.budget_ms;
  why += fmt::format("; soonest target: {:.2f} ms iterations at density {:.4f}", soonest.iteration_ms,
                     soonest.choice.density);
  return soonest.choice;
}

std::optional<Plan> Controller::tick(double now_s, int current_iteration) {
  if (now_s < next_tick_s_) return std::nullopt;
  ++ticks_;
  const double step = ticks_ < options_.early_ticks ? options_.interval_s / 4 : options_.interval_s;
  while (next_tick_s_ <= now_s) next_tick_s_ += step;

  ControlRecord r;
  r.time_s = now_s;
  r.iteration = current_iteration;
  r.compute_ms = compute_ms();
  ExchangePace pace;
  pace.compute_ms = r.compute_ms;
  pace.staleness = staleness_;
  pace.latency_hops = std::max(1, traffic_.nodes - 1);
  pace.budget_ms = budget_ms_;
  pace.density = density_;
  estimator_.add_delivered(delivered_mbps_);
  const auto estimate = estimator_.update(pace);
  r.estimated_mbps = estimate.mbps;
  r.measured_mbps = estimate.measured_mbps;
  r.latency_ms = estimate.latency_ms;
  r.wait_fraction = estimate.wait_fraction;
  r.delivered_mbps = delivered_mbps_;
  std::fill(compute_sum_ms_.begin(), compute_sum_ms_.end(), 0.0);
  std::fill(compute_count_.begin(), compute_count_.end(), 0);

  std::string why = estimate.reason;
  if (estimate.planned_wait_ms > 0) why += fmt::format("; planned wait {:.2f} ms", estimate.planned_wait_ms);
  bool changed = false;
  if (r.compute_ms > 0) {
    const auto choice = options_.sparsity_cost > 0 ? soonest_choice(r, pace, why) : paper_choice(r, pace, why);
    budget_ms_ = r.budget_ms;
    if (std::abs(choice.density - density_) > options_.density_hysteresis * density_) {
      why += fmt::format("; density {:.4f} -> {:.4f}", density_, choice.density);
      density_ = choice.density;
      changed = true;
    }
    if (choice.at_lower_bound) why += "; at min_density";
    if (choice.at_upper_bound) why += "; at max_density";
  }
  if (options_.adapt_batch) {
    if (auto batches = better_batches()) {
      why += "; batches rebalanced";
      batch_ = *batches;
      changed = true;
    }
  }
  const bool drain = drain_due();
  if (drain) {
    why += fmt::format("; drain: {} iterations at density {:.4f} first", options_.drain_iterations,
                       options_.min_density);
    changed = true;
  }
  r.density = density_;
  r.batch = batch_;
  r.effective_iteration = changed ? current_iteration + staleness_ + 2 : -1;
  r.reason = changed ? why : why + "; hold";
  records_.push_back(r);
  if (!changed) return std::nullopt;
  Plan plan{r.effective_iteration, density_, batch_, r.reason};
  if (drain) {
    plan.drain_iterations = options_.drain_iterations;
    plan.drain_density = options_.min_density;
  }
  if (options_.early_density_switch) plan.density_from = current_iteration + 1;
  return plan;
}

bool Controller::drain_due() {
  if (options_.drain_every_ticks == 0 || ++ticks_since_drain_ < options_.drain_every_ticks) return false;
  ticks_since_drain_ = 0;
  return true;
}

}  // namespace st::control
