#pragma once
// The soonest-target density rule (docs/control.md, "The soonest target").
//
// The paper's rule takes the largest density whose traffic fits the compute
// window. Where the round trip, not the compute, sets the pace (fast GPUs
// over a slow WAN) nothing fits and that rule sits at its lower bound,
// while convergence at low density costs iterations. This rule weighs both:
// for each density d it predicts
//   the iteration time P(d) = max(C, X(d), (C + E + X(d)) / (s + 1)),
//     compute C, exchange latency E, staleness s (bandwidth_estimator.h,
//     ExchangePace), transfer time X(d) = bytes(d) x 8 / bandwidth: the
//     link must also carry each iteration's bytes before the next;
//   the iterations to the target N(d) = N1 x (1 + k / sqrt(d)),
//     an empirical model whose one constant k (`sparsity_cost`) is fitted
//     on validation runs at fixed densities (analysis/fit_sparsity_cost.py);
// and picks the density that minimises P(d) x N(d). Where the compute sets
// the pace P is flat until the exchange fills the compute window, so the
// rule takes at least the paper's density there; where the round trip
// does, it pays iteration time for density only while that shortens the
// time to the target.
#include "core/control/traffic_model.h"

namespace st::control {

struct IterationPace {
  double compute_ms = 0;           // C
  double exchange_latency_ms = 0;  // E: one-way latencies one after another in an exchange
  int staleness = 1;               // s
};

// P for a transfer time X (ms).
double predicted_iteration_ms(const IterationPace& pace, double transfer_ms);

// The relative iterations to the target at density d: 1 + k / sqrt(d).
double iterations_factor(double density, double sparsity_cost);

struct SoonestChoice {
  DensityChoice choice;        // budget_ms: the transfer time X planned
  double iteration_ms = 0;     // P at that density
  double relative_time = 0;    // P x (1 + k / sqrt(d)), ms per dense-equivalent iteration
};

// The density in [lower, upper] (a log-spaced grid of 512 points, both
// bounds included) with the smallest predicted time to the target.
// Throws std::invalid_argument for bad bounds, a non-positive bandwidth or
// a negative sparsity_cost.
SoonestChoice soonest_density(const TrafficModel& model, double bandwidth_mbps, const IterationPace& pace,
                              double sparsity_cost, double lower, double upper);

}  // namespace st::control
