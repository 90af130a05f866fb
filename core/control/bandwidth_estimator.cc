#include "core/control/bandwidth_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace st::control {

BandwidthEstimator::BandwidthEstimator(BandwidthEstimatorOptions o, int nodes)
    : options_(o), nodes_(nodes), mbps_(o.initial_mbps) {
  auto require = [](bool ok, const char* name, double value) {
    if (!ok) throw std::invalid_argument(fmt::format("bandwidth estimator: {} = {} is out of range", name, value));
  };
  require(o.min_mbps > 0, "min_mbps", o.min_mbps);
  require(o.max_mbps >= o.min_mbps, "max_mbps", o.max_mbps);
  require(o.initial_mbps >= o.min_mbps && o.initial_mbps <= o.max_mbps, "initial_mbps", o.initial_mbps);
  require(o.growth >= 1, "growth", o.growth);
  require(o.probe_growth == 0 || o.probe_growth >= 1, "probe_growth", o.probe_growth);
  require(o.probe_ceiling >= 1, "probe_ceiling", o.probe_ceiling);
  require(o.wait_decrease > 0 && o.wait_decrease <= 1, "wait_decrease", o.wait_decrease);
  require(o.wait_threshold >= 0 && o.wait_threshold < 1, "wait_threshold", o.wait_threshold);
  require(o.latency_memory >= 1, "latency_memory", o.latency_memory);
  require(o.min_transfer_ms >= 0, "min_transfer_ms", o.min_transfer_ms);
  require(o.slow_start_ticks >= 0, "slow_start_ticks", o.slow_start_ticks);
  require(o.pair_wait_iterations >= 0, "pair_wait_iterations", o.pair_wait_iterations);
  require(nodes >= 1, "nodes", nodes);
  if (o.pair_by_iteration && (o.skip_peer_lag || o.skip_early_arrivals))
    throw std::invalid_argument(
        "bandwidth estimator: pair_by_iteration replaces skip_peer_lag and skip_early_arrivals; set one");
  if (o.samples_by_plan && o.fresh_overruns)
    throw std::invalid_argument("bandwidth estimator: samples_by_plan replaces fresh_overruns; set one");
}

void BandwidthEstimator::add(const ExchangeSample& sample) { pending_.push_back(sample); }

void BandwidthEstimator::add_round_trip(double rtt_ms) {
  if (!(rtt_ms >= 0)) return;
  pending_rtt_ms_ = pending_rtt_ms_ < 0 ? rtt_ms : std::min(pending_rtt_ms_, rtt_ms);
}

void BandwidthEstimator::add_delivered(double mbps) {
  if (mbps >= 0) pending_delivered_mbps_ = std::max(pending_delivered_mbps_, mbps);
}

double BandwidthEstimator::latency_ms() const {
  if (!rtt_minima_.empty()) return *std::min_element(rtt_minima_.begin(), rtt_minima_.end()) / 2;
  if (latency_minima_.empty()) return 0;
  return *std::min_element(latency_minima_.begin(), latency_minima_.end());
}

namespace {

// The union of [max(start + latency, from), end) over the exchanges.
double transfer_ms_of(std::vector<std::pair<double, double>> intervals, double latency_ms,
                      double from_ms = -std::numeric_limits<double>::infinity()) {
  for (auto& [start, end] : intervals) start = std::min(end, std::max(start + latency_ms, from_ms));
  std::sort(intervals.begin(), intervals.end());
  double total = 0, covered_to = -std::numeric_limits<double>::infinity();
  for (const auto& [start, end] : intervals) {
    total += std::max(0.0, end - std::max(start, covered_to));
    covered_to = std::max(covered_to, end);
  }
  return total;
}

// Per sample, the time at the start of each of its exchanges that carries
// no bytes: the latency, and with `skip_peer_lag` also how much longer the
// sample's quickest exchange took than the quickest among the samples of
// its iteration (at least the latency).
std::vector<double> unused_ms_of(const std::vector<ExchangeSample>& samples, double latency_ms, bool skip_peer_lag) {
  std::vector<double> unused(samples.size(), latency_ms);
  if (!skip_peer_lag) return unused;
  std::map<int, double> quickest;
  for (const auto& s : samples) {
    if (s.iteration < 0) continue;
    const auto [it, fresh] = quickest.emplace(s.iteration, s.shortest_ms);
    if (!fresh) it->second = std::min(it->second, s.shortest_ms);
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const auto it = quickest.find(samples[i].iteration);
    if (it != quickest.end()) unused[i] += std::max(0.0, samples[i].shortest_ms - std::max(latency_ms, it->second));
  }
  return unused;
}

// Whether one of the sample's exchanges ended within `latency_ms` of its
// start: its peer's part was there before it began.
bool arrived_early(const ExchangeSample& s, double latency_ms) {
  return std::any_of(s.intervals.begin(), s.intervals.end(),
                     [&](const auto& interval) { return interval.second - interval.first < latency_ms; });
}

// Whether the samples ran at more than one density (those that name none
// aside).
bool mixed_densities(const std::vector<ExchangeSample>& samples) {
  double seen = 0;
  for (const auto& s : samples) {
    if (s.density <= 0) continue;
    if (seen > 0 && s.density != seen) return true;
    seen = s.density;
  }
  return false;
}

// samples_by_plan without pair_by_iteration: the samples less those of an
// iteration whose samples in this tick ran at more than one density.
std::vector<ExchangeSample> without_mixed_iterations(const std::vector<ExchangeSample>& samples) {
  std::map<int, std::vector<ExchangeSample>> by_iteration;
  for (const auto& s : samples)
    if (s.iteration >= 0) by_iteration[s.iteration].push_back(s);
  std::vector<ExchangeSample> kept;
  for (const auto& s : samples)
    if (s.iteration < 0 || !mixed_densities(by_iteration[s.iteration])) kept.push_back(s);
  return kept;
}

// Samples timed together, and per sample the time at the start of each of
// its exchanges that carries no bytes.
struct TimedGroup {
  std::vector<ExchangeSample> samples;
  std::vector<double> unused_ms;
};

// after_previous_iteration: where the sample's transfer may start, in ms
// from its origin (-infinity: anywhere), given each node's latest exchange
// end timed so far; then moves its node's to the sample's last end.
double clear_from_ms(const ExchangeSample& s, std::map<int, double>& node_clear_ms) {
  constexpr double anywhere = -std::numeric_limits<double>::infinity();
  if (s.origin_ms < 0 || s.node < 0 || s.intervals.empty()) return anywhere;
  double last_end = 0;
  for (const auto& interval : s.intervals) last_end = std::max(last_end, interval.second);
  double& clear = node_clear_ms.try_emplace(s.node, anywhere).first->second;
  const double from = clear - s.origin_ms;
  clear = std::max(clear, s.origin_ms + last_end);
  return from;
}

// The groups' bytes over their transfer time (the groups whose summed
// transfer could be timed, and with `skip_early_arrivals` none with an
// exchange that had its bytes before it began). With
// `after_previous_iteration`, each node's clear time (`node_clear_ms`)
// moves with every sample, timed or not. Paired, the clear time can take
// off the first node's lag behind its peer, which pairing counts on to
// cancel the time the second node missed, and a node whose bytes had all
// arrived before it asked then adds bytes without time (R read 1141 Mbps
// at 500). Timing a group only if each of its samples could be timed
// removed those readings but a third of the trace's, and used less of the
// trace (docs/control-rate.md), so it is not done.
std::optional<double> rate_mbps(const std::vector<TimedGroup>& groups, double latency_ms,
                                const BandwidthEstimatorOptions& options, std::map<int, double>& node_clear_ms) {
  double bytes = 0, transfer_ms = 0;
  for (const auto& group : groups) {
    const bool mixed = options.samples_by_plan && mixed_densities(group.samples);
    double group_bytes = 0, group_transfer_ms = 0, group_busy_ms = 0;
    for (std::size_t i = 0; i < group.samples.size(); ++i) {
      const auto& s = group.samples[i];
      const double from = options.after_previous_iteration ? clear_from_ms(s, node_clear_ms)
                                                           : -std::numeric_limits<double>::infinity();
      if (mixed || (options.skip_early_arrivals && arrived_early(s, latency_ms))) continue;
      const double unused = group.unused_ms[i];
      group_bytes += s.bytes;
      if (s.intervals.empty()) {
        group_busy_ms += s.busy_ms;
        group_transfer_ms += s.busy_ms - unused;
      } else {
        group_busy_ms += std::isfinite(from) ? transfer_ms_of(s.intervals, 0, from) : s.busy_ms;
        group_transfer_ms += transfer_ms_of(s.intervals, unused, from);
      }
    }
    if (group_bytes > 0 && group_transfer_ms >= std::max(options.min_transfer_ms, 0.05 * group_busy_ms)) {
      bytes += group_bytes;
      transfer_ms += group_transfer_ms;
    }
  }
  if (transfer_ms > 0) return bytes * 8 / (transfer_ms * 1e3);
  return std::nullopt;
}

// How many distinct nodes the samples come from.
std::size_t nodes_in(const std::vector<ExchangeSample>& samples) {
  std::vector<int> nodes;
  for (const auto& s : samples) nodes.push_back(s.node);
  std::sort(nodes.begin(), nodes.end());
  return static_cast<std::size_t>(std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

// Each sample timed alone. skip_peer_lag compares the tick's samples of
// one iteration, so the unused times come from the whole tick.
std::vector<TimedGroup> single_groups(const std::vector<ExchangeSample>& samples, double latency_ms,
                                      bool skip_peer_lag) {
  const auto unused = unused_ms_of(samples, latency_ms, skip_peer_lag);
  std::vector<TimedGroup> groups;
  for (std::size_t i = 0; i < samples.size(); ++i) groups.push_back({{samples[i]}, {unused[i]}});
  return groups;
}

// pair_by_iteration: the samples join `unpaired` by iteration, and each
// iteration that all `nodes` have now reported leaves it as one group; a
// sample that names no iteration or node is timed alone.
std::vector<TimedGroup> paired_groups(const std::vector<ExchangeSample>& samples,
                                      std::map<int, std::vector<ExchangeSample>>& unpaired, int nodes,
                                      int wait_iterations, double latency_ms) {
  std::vector<TimedGroup> groups;
  for (const auto& s : samples) {
    if (s.iteration >= 0 && s.node >= 0)
      unpaired[s.iteration].push_back(s);
    else
      groups.push_back({{s}, {latency_ms}});
  }
  int newest = -1;
  for (auto it = unpaired.begin(); it != unpaired.end();) {
    newest = std::max(newest, it->first);
    if (nodes_in(it->second) < static_cast<std::size_t>(nodes)) {
      ++it;
      continue;
    }
    const std::size_t n = it->second.size();
    groups.push_back({std::move(it->second), std::vector<double>(n, latency_ms)});
    it = unpaired.erase(it);
  }
  // An iteration some node never reports (its telemetry lost, the run
  // ending) must not hold its samples for ever.
  unpaired.erase(unpaired.begin(), unpaired.lower_bound(newest - wait_iterations));
  return groups;
}

double planned_wait_ms(const ExchangePace& pace, double latency_ms) {
  if (pace.compute_ms <= 0) return 0;
  const double exchange_ms = pace.latency_hops * latency_ms + std::max(0.0, pace.budget_ms);
  return std::max(0.0, (exchange_ms - pace.staleness * pace.compute_ms) / (pace.staleness + 1));
}

// Whether the samples of the newest iteration among `samples` (when they
// name one) all waited no more than the planned wait.
bool newest_iteration_waited_as_planned(const std::vector<ExchangeSample>& samples, double planned_wait_ms) {
  int newest = -1;
  for (const auto& s : samples) newest = std::max(newest, s.iteration);
  if (newest < 0) return false;
  return std::all_of(samples.begin(), samples.end(), [&](const ExchangeSample& s) {
    return s.iteration != newest || s.wait_ms <= planned_wait_ms;
  });
}

}  // namespace

void BandwidthEstimator::note_overrun(double delivered_mbps) {
  if (!overran_last_tick_) {  // a new episode
    episode_start_mbps_ = mbps_;
    episode_delivered_mbps_ = 0;
  }
  episode_delivered_mbps_ = std::max(episode_delivered_mbps_, delivered_mbps);
}

void BandwidthEstimator::resume_after_episode(bool still_overran, BandwidthEstimate& e) {
  if (still_overran) e.reason += "; the newest iteration waited no more than planned";
  const double resume = std::min(episode_delivered_mbps_, episode_start_mbps_);
  if (resume > mbps_) {
    mbps_ = resume;
    e.reason += "; resumed at the delivered rate";
  }
}

void BandwidthEstimator::drain_below_delivered(double delivered_mbps, BandwidthEstimate& e) {
  const double drain = std::min(episode_start_mbps_, delivered_mbps * (1 - options_.wait_decrease * e.wait_fraction));
  if (drain > mbps_) {
    mbps_ = drain;
    e.reason += "; draining below the delivered rate";
  }
}

BandwidthEstimate BandwidthEstimator::update(const ExchangePace& pace) {
  if (pending_rtt_ms_ >= 0) {
    rtt_minima_.push_back(pending_rtt_ms_);
    if (static_cast<int>(rtt_minima_.size()) > options_.latency_memory) rtt_minima_.pop_front();
    pending_rtt_ms_ = -1;
  }
  const double delivered_mbps = pending_delivered_mbps_;
  pending_delivered_mbps_ = 0;
  BandwidthEstimate e;
  if (pending_.empty()) {
    e.mbps = mbps_;
    e.latency_ms = latency_ms();
    e.reason = "no samples";
    return e;
  }
  double shortest = std::numeric_limits<double>::infinity();
  for (const auto& s : pending_)
    if (s.bytes > 0) shortest = std::min(shortest, s.shortest_ms);
  if (shortest < std::numeric_limits<double>::infinity()) {
    latency_minima_.push_back(shortest);
    if (static_cast<int>(latency_minima_.size()) > options_.latency_memory) latency_minima_.pop_front();
  }
  e.latency_ms = latency_ms();
  e.planned_wait_ms = planned_wait_ms(pace, e.latency_ms);

  // samples_by_plan: a sample above the newest plan's density ran under a
  // plan that a smaller one answered; its wait is not judged.
  const auto answered = [&](const ExchangeSample& s) {
    return options_.samples_by_plan && pace.density > 0 && s.density > pace.density * (1 + 1e-9);
  };
  double wait = 0, weighted = 0, judged = 0;
  bool answered_waited = false;
  for (const auto& s : pending_) {
    if (answered(s)) {
      answered_waited = answered_waited || s.wait_ms > e.planned_wait_ms;
      continue;
    }
    wait += s.wait_ms;
    weighted += s.wait_ms + 1.5 * s.backward_ms;
    ++judged;
  }
  if (e.planned_wait_ms > 0) {
    // Only the tick's wait beyond the plan, summed before it is compared:
    // where the round trip paces the pipeline, iterations take turns
    // waiting (14 and 5 ms about a planned 9.5), and a per-iteration
    // comparison would count every other one as an overrun. The fraction is
    // of the planned iteration (compute plus planned wait), not of 1.5 x
    // backward: a fast GPU's backward (under a millisecond) would make any
    // overrun read as f near 1 and shrink the estimate tenfold at once.
    const double unplanned = std::max(0.0, wait - e.planned_wait_ms * judged);
    wait = unplanned;
    weighted = unplanned + judged * (pace.compute_ms + e.planned_wait_ms);
  }
  const bool newest_drained = newest_iteration_waited_as_planned(pending_, e.planned_wait_ms);
  const auto groups =
      options_.pair_by_iteration
          ? paired_groups(pending_, unpaired_, nodes_, options_.pair_wait_iterations, e.latency_ms)
          : single_groups(options_.samples_by_plan ? without_mixed_iterations(pending_) : pending_, e.latency_ms,
                          options_.skip_peer_lag);
  e.measured_mbps = rate_mbps(groups, e.latency_ms, options_, node_clear_ms_);
  pending_.clear();
  e.wait_fraction = weighted > 0 ? wait / weighted : 0;

  ++ticks_with_samples_;
  const bool waited = e.wait_fraction > options_.wait_threshold;
  // A wait that a plan already answered holds the estimate (fresh_overruns,
  // samples_by_plan); the rule that finds it names it.
  const char* held = nullptr;
  if (waited && options_.fresh_overruns && !overran_last_tick_ && newest_drained)
    held = "older iterations waited, the newest did not; hold";
  else if (!waited && answered_waited)
    held = judged == 0 ? "only iterations above the newest plan's density reported, and they waited; hold"
                       : "iterations above the newest plan's density waited; hold";
  const bool overrun = waited && !held;
  // samples_by_plan, where every sample ran above the newest plan's
  // density: nothing has reported of that plan yet, so an overrun episode
  // neither ends nor starts here (ending one resumed the estimate while
  // the larger plan's queue still drained, and the next tick cut it again).
  const bool nothing_judged = held && judged == 0;
  const bool slow_start = overrun && ticks_with_samples_ <= options_.slow_start_ticks;
  if (overrun && !slow_start) note_overrun(delivered_mbps);
  if (held) {
    e.reason = held;
  } else if (slow_start) {
    // Keeps the estimate, or takes a faster measurement: a slower one is
    // the windows opening.
    mbps_ = std::max(mbps_, e.measured_mbps.value_or(0));
    e.reason = "slow start";
  } else if (overrun && options_.decrease_once && overran_last_tick_) {
    mbps_ = std::min(mbps_, e.measured_mbps.value_or(mbps_));
    e.reason = "overrun, decreased already";
  } else if (overrun) {
    mbps_ = std::min(mbps_, e.measured_mbps.value_or(mbps_)) * (1 - options_.wait_decrease * e.wait_fraction);
    e.reason = "overrun";
  } else if (e.measured_mbps && *e.measured_mbps > mbps_ * options_.growth) {
    mbps_ = *e.measured_mbps;
    e.reason = "measured";
  } else {
    // Probing stops at a few times what was measured, so a link that is
    // never filled (density at its upper bound) cannot inflate the estimate
    // without limit.
    const double ceiling =
        e.measured_mbps ? std::max(mbps_, options_.probe_ceiling * *e.measured_mbps) : options_.max_mbps;
    const double factor = e.measured_mbps || options_.probe_growth == 0 ? options_.growth : options_.probe_growth;
    mbps_ = std::min(mbps_ * factor, ceiling);
    e.reason = "probe";
  }
  const bool later_in_episode = overrun && !slow_start && overran_last_tick_;
  if (later_in_episode && options_.drain_at_delivered) drain_below_delivered(delivered_mbps, e);
  const bool resumed =
      options_.resume_at_delivered && overran_last_tick_ && !nothing_judged && (!overrun || newest_drained);
  if (resumed) resume_after_episode(overrun, e);
  if (!nothing_judged) overran_last_tick_ = overrun && !slow_start && !resumed;
  mbps_ = std::clamp(mbps_, options_.min_mbps, options_.max_mbps);
  e.mbps = mbps_;
  return e;
}

}  // namespace st::control
