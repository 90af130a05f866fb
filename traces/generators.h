#pragma once
// Synthetic traces and transforms of traces. Random generators take an
// explicit seed (std::mt19937_64 with its own normal/uniform draws, so a seed
// gives the same trace with any standard library). Invalid parameters throw
// std::invalid_argument naming the parameter. docs/traces.md lists them all.
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "traces/trace.h"

namespace st::traces {

// --- generators ---------------------------------------------------------
// Grid generators make steps of step_s from 0 to duration_s (a shorter last
// step when duration_s is not a multiple of step_s).

Trace constant_trace(double mbps, double duration_s, double step_s = 1);
// (time_s, mbps) change points, exactly as given (times increasing, the
// first >= 0); the last rate holds until duration_s.
Trace step_trace(const std::vector<std::pair<double, double>>& points, double duration_s);
// `high` for duty * period_s, then `low` for the rest of each period; exact
// edges (not on a grid).
Trace square_trace(double low_mbps, double high_mbps, double period_s, double duration_s, double duty = 0.5);
// mean + amplitude * sin(2 pi t / period), sampled at the middle of each
// step, negative values cut to 0.
Trace sine_trace(double mean_mbps, double amplitude_mbps, double period_s, double duration_s, double step_s = 1);

// AR(1): x[0] ~ N(mean, spread^2); x[i+1] = mean + correlation * (x[i] - mean)
// + sqrt(1 - correlation^2) * spread * N(0, 1), so every step has stddev
// `spread` and neighbouring steps correlate by `correlation`. The output is
// clamped to [floor, ceiling] (the process itself is not), which moves the
// mean and stddev when the bounds bite.
struct Ar1Parameters {
  double mean_mbps = 0;
  double spread_mbps = 0;
  double correlation = 0;  // [0, 1)
  double floor_mbps = 0;
  double ceiling_mbps = std::numeric_limits<double>::infinity();
};
Trace ar1_trace(const Ar1Parameters& p, double duration_s, double step_s, std::uint64_t seed);

// Mean-modulated Markov chain: `states` levels spaced evenly over
// mean * [1 - depth, 1 + depth]; each step the chain leaves its state with
// probability step_s / hold_s for a uniformly chosen other state (so the
// states are equally likely and the long-run mean is `mean`); within a state
// the rate is its level plus N(0, noise^2), cut to 0.
struct MarkovParameters {
  double mean_mbps = 0;
  int states = 3;
  double depth = 0.5;  // [0, 1]
  double hold_s = 10;  // mean time in a state, >= step_s
  double noise_mbps = 0;
};
Trace markov_trace(const MarkovParameters& p, double duration_s, double step_s, std::uint64_t seed);

// --- transforms (each returns a new trace) ----------------------------
struct Outage {
  double start_s = 0;
  double duration_s = 0;
};
// Rate 0 over each [start, start + duration) (cut at the trace's end;
// delay and loss kept). An outage starting at or past the end is an error.
Trace with_outages(const Trace& trace, const std::vector<Outage>& outages);
// All rates multiplied so the time-weighted mean is target_mbps.
Trace scale_to_mean(const Trace& trace, double target_mbps);
// [t0, t1) of the trace (looping past its end), re-based to start at 0.
Trace crop(const Trace& trace, double t0_s, double t1_s);
// The trace repeated (or cut) to last exactly duration_s.
Trace loop_to(const Trace& trace, double duration_s);
// Rates clamped to [min_mbps, max_mbps].
Trace clamp_rates(const Trace& trace, double min_mbps,
                  double max_mbps = std::numeric_limits<double>::infinity());
// Rates rounded to a multiple of quantum_mbps (keeps written files short).
Trace round_rates(const Trace& trace, double quantum_mbps);

// --- generic, for scenario files and the command line ----------------
struct GeneratorSpec {
  std::string kind;                          // constant, step, square, sine, ar1, markov
  std::map<std::string, double> parameters;  // per kind; see generator_kinds()
  std::uint64_t seed = 1;
  double duration_s = 60;
  double step_s = 1;
  std::vector<std::pair<double, double>> points;  // kind "step": (time_s, mbps)
  std::vector<Outage> outages;                    // applied after the kind
  std::optional<double> target_mean_mbps;         // then scaled to this mean
  // Finally rates are rounded to this quantum (0: not rounded); 1 kbps by
  // default, which keeps files short and moves the mean by < 0.0005 Mbps.
  double quantum_mbps = 0.001;
};

struct GeneratorParameterInfo {
  std::string name;
  std::optional<double> default_value;  // none: required
  std::string help;
};
struct GeneratorKindInfo {
  std::string kind;
  std::string help;
  bool seeded = false;
  bool uses_step = false;
  std::vector<GeneratorParameterInfo> parameters;
};
const std::vector<GeneratorKindInfo>& generator_kinds();

// Throws std::invalid_argument naming an unknown kind, an unknown or missing
// parameter, or an invalid value.
Trace generate(const GeneratorSpec& spec);

}  // namespace st::traces
