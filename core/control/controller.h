#pragma once
// StellaTrain's controller (paper section 4; docs/control.md). It runs
// beside rank 0 and sees every node's telemetry (core/telemetry). At each
// tick (every `interval_s` of the executor's clock; the first `early_ticks`
// every quarter of it) it
// * updates the bandwidth estimate (bandwidth_estimator.h),
// * picks the largest density whose traffic fits the estimated bandwidth in
//   the compute time the exchange overlaps with, minus the latency floor
//   (traffic_model.h), within [min_density, max_density], or with
//   `sparsity_cost` the density that reaches the target soonest
//   (soonest_density.h),
// * refits each GPU's throughput model and, when it shortens the slowest
//   GPU's predicted compute time by more than `batch_hysteresis`, splits the
//   global batch anew (throughput_model.h),
// and returns a Plan that takes effect `staleness + 2` iterations after the
// one rank 0 has started: no node can have begun that iteration when the
// plan reaches it (docs/control.md gives the argument), so all nodes switch
// together (with `early_density_switch`, only the batches do). Every tick
// is recorded (control.csv) with its inputs and reason.
//
// The controller itself is pure: no transport, no clock; the engine feeds
// it telemetry and asks it to tick (core/train/node/control_agent.h).
#include <optional>
#include <string>
#include <vector>

#include "core/control/bandwidth_estimator.h"
#include "core/control/plan.h"
#include "core/control/soonest_density.h"
#include "core/control/throughput_model.h"
#include "core/control/traffic_model.h"
#include "core/telemetry/node_telemetry.h"

namespace st::control {

struct ControllerOptions {
  double interval_s = 1.0;
  // The first `early_ticks` ticks come every interval_s / 4, the rest every
  // interval_s. The first estimate is a guess (initial_mbps) or a rate
  // measured while TCP's windows open, and the density planned from it
  // holds until the next tick: with one early tick, a 500 Mbps link whose
  // first tick saw 43 Mbps ran the second quarter of its density warm-up at
  // a third of the density the next, measured, tick planned
  // (docs/control-measured.md, "Early ticks"). 1: only the first tick is early.
  int early_ticks = 1;
  double min_density = 0.001;
  // The exchange of iteration t overlaps all of iteration t + 1 before its
  // wait: the parameter load (the read through the lookahead's view and
  // into each replica) as well as the forward and backward. false: C is
  // the forward + backward + gather, as the paper's rule has it. true: C
  // also counts each node's load, which at ResNet-152 size priced by an
  // RTX 3090 is two thirds of the iteration (docs/control.md, "The
  // compute window").
  bool window_includes_load = false;
  double max_density = 0.5;
  double safety = 0.9;             // fraction of the overlap budget the exchange may fill
  bool adapt_batch = true;
  double batch_hysteresis = 0.05;  // relative gain in slowest-GPU time needed to move batches
  double density_hysteresis = 0.02;  // relative density change below which the plan is kept
  // 0: the paper's rule only (the exchange fits in the compute window less
  // the latency). In (0, 1): also keep the link busy at least this fraction
  // of each iteration, where the round trip, not the compute, sets the pace
  // (docs/control-measured.md, "When the round trip exceeds the compute window").
  double link_utilization = 0;
  // 0: the rules above. > 0: the soonest-target rule instead
  // (soonest_density.h): the density minimising the predicted iteration
  // time x (1 + sparsity_cost / sqrt(density)), the iterations to the target
  // relative to dense, with the constant fitted on validation runs. Not
  // combined with link_utilization: both choose the density.
  double sparsity_cost = 0;
  // Latency probes (rank 0 to each node and back): false, one per node at
  // each tick, sent as the tick's telemetry arrives, which is when the
  // iteration's exchange is queued; true, one per node whenever telemetry
  // arrives and none is out, so that the minimum over a tick also sees the
  // moments between exchanges (docs/control.md, "The latency floor").
  // Probes stop with the telemetry, so a simulation still runs out of
  // events when training ends.
  bool probe_every_iteration = false;
  // true: rank 0 also probes each node before the first iteration, and
  // the nodes begin once those probes are answered (ControlAgent::start),
  // so no gradient is queued ahead of them and the latency floor holds the
  // path's latency from the first tick on (for `estimator.latency_memory`
  // ticks).
  // Without it the first probes leave behind the first iterations'
  // exchanges, and where those queue (a first density above what the link
  // carries) the floor reads the queue: ResNet-152 at 100 Mbps read 636 ms
  // one way at its third tick against 20, planned a wait of 287 ms and
  // held the density at its floor for seven iterations while the link
  // went idle (docs/control-bottleneck.md, "Probing before the first iteration").
  bool probe_at_start = false;
  // Every `drain_every_ticks` ticks (0: never), the plan first runs
  // `drain_iterations` iterations at min_density, and rank 0 probes the
  // latency on each of them: a link this run keeps full (filling most of
  // it, or an estimate above it) never has an empty queue otherwise, so no
  // probe sees the path's latency, and the inflated latency makes the
  // wait it causes look planned (BBR's ProbeRTT drains its queue for the
  // same reason; docs/control.md, "The latency floor").
  int drain_every_ticks = 0;
  int drain_iterations = 4;
  // false: a plan's density takes effect with its batches, staleness + 2
  // iterations after rank 0's current one, every node at the same
  // iteration. true: each node takes the density from its own next
  // iteration (Plan::density_from), so the rate a plan follows is that
  // much younger; the batches still switch together. On a link that
  // changes every second, the delay from tick to plan bounds how much of
  // the link a plan can use (docs/control-reaction.md, docs/control-switch.md).
  bool early_density_switch = false;
  // The iterations before this one ran above the plan's density (the
  // system's density warm-up): their wait is the warm-up's, not a sign
  // that the plan overran, so the estimator does not lower its estimate
  // for it. Set by the run driver from the system, not by the user.
  int raised_density_iterations = 0;
  BandwidthEstimatorOptions estimator;
};

// Throws std::invalid_argument naming the option.
void validate(const ControllerOptions& options);

struct ControlRecord {
  double time_s = 0;
  int iteration = 0;            // rank 0's iteration at the tick
  int effective_iteration = 0;  // when the decision applies (-1: nothing changed)
  double estimated_mbps = 0;
  std::optional<double> measured_mbps;
  double latency_ms = 0;
  double wait_fraction = 0;
  double compute_ms = 0;        // the overlap: slowest node's forward + backward + gather (+ load)
  double budget_ms = 0;
  double density = 0;           // in force after this tick
  std::vector<std::vector<int>> batch;
  double delivered_mbps = 0;    // rank 0's received bytes over the last window
  std::string reason;
};

class Controller {
 public:
  // `batch`: the starting batch per node and local GPU; `density`: the
  // starting density.
  Controller(ControllerOptions options, TrafficModel traffic, std::vector<std::vector<int>> batch, double density,
             int staleness);

  void on_telemetry(const telemetry::NodeTelemetry& t);
  // A latency probe's round trip (rank 0 to a node and back).
  void on_round_trip(double rtt_ms) { estimator_.add_round_trip(rtt_ms); }
  // A plan when the tick changes density or batches; nothing otherwise.
  // Call often; it acts once `interval_s` has passed since the last tick.
  std::optional<Plan> tick(double now_s, int current_iteration);

  const std::vector<ControlRecord>& records() const { return records_; }
  const ControllerOptions& options() const { return options_; }

 private:
  double compute_ms() const;
  double link_filling_ms(double compute_ms, double exchange_latency_ms) const;
  // The density rules; each sets r.budget_ms (the transfer time it plans)
  // and adds to the tick's reason.
  DensityChoice paper_choice(ControlRecord& r, const ExchangePace& pace, std::string& why) const;
  DensityChoice soonest_choice(ControlRecord& r, const ExchangePace& pace, std::string& why) const;
  std::optional<std::vector<std::vector<int>>> better_batches() const;
  // Counts the tick; true every drain_every_ticks-th.
  bool drain_due();

  ControllerOptions options_;
  TrafficModel traffic_;
  std::vector<std::vector<int>> batch_;
  double density_;
  int staleness_;
  BandwidthEstimator estimator_;
  std::vector<std::vector<GpuThroughputModel>> gpus_;  // [node][gpu]
  std::vector<double> compute_sum_ms_;                 // per node, since the last tick
  std::vector<int> compute_count_;
  double delivered_mbps_ = 0;
  int ticks_since_drain_ = 0;
  int ticks_ = 0;
  double budget_ms_ = 0;  // the last tick's: the transfer time the density in force was chosen for
  double next_tick_s_;
  std::vector<ControlRecord> records_;
};

}  // namespace st::control
