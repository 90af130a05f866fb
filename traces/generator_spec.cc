// generate(GeneratorSpec): kind and parameter names to generator calls.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "traces/generators.h"

namespace st::traces {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::vector<GeneratorKindInfo> make_kinds() {
  return {
      {"constant", "one rate throughout", false, true, {{"mbps", std::nullopt, "the rate"}}},
      {"step", "rates changing at given times (points)", false, false, {}},
      {"square",
       "high for duty * period, then low, repeating",
       false,
       false,
       {{"low", std::nullopt, "rate of the low phase, Mbps"},
        {"high", std::nullopt, "rate of the high phase, Mbps"},
        {"period", std::nullopt, "seconds per cycle"},
        {"duty", 0.5, "fraction of the period at `high`"}}},
      {"sine",
       "mean + amplitude * sin(2 pi t / period), sampled mid-step, cut at 0",
       false,
       true,
       {{"mean", std::nullopt, "Mbps"}, {"amplitude", std::nullopt, "Mbps"}, {"period", std::nullopt, "seconds"}}},
      {"ar1",
       "AR(1) process around mean, clamped to [floor, ceiling]",
       true,
       true,
       {{"mean", std::nullopt, "Mbps"},
        {"spread", std::nullopt, "standard deviation of every step, Mbps"},
        {"correlation", std::nullopt, "correlation of neighbouring steps, [0, 1)"},
        {"floor", 0.0, "lowest rate, Mbps"},
        {"ceiling", kInfinity, "highest rate, Mbps"}}},
      {"markov",
       "Markov chain over `states` levels in mean * [1 - depth, 1 + depth], plus noise",
       true,
       true,
       {{"mean", std::nullopt, "long-run mean, Mbps"},
        {"states", 3.0, "number of levels, 2..64"},
        {"depth", 0.5, "levels span mean * [1 - depth, 1 + depth]"},
        {"hold", 10.0, "mean seconds in a state"},
        {"noise", 0.0, "standard deviation within a state, Mbps"}}},
  };
}

const GeneratorKindInfo& kind_named(const std::string& kind) {
  for (const auto& info : generator_kinds())
    if (info.kind == kind) return info;
  std::string known;
  for (const auto& info : generator_kinds()) known += (known.empty() ? "" : ", ") + info.kind;
  throw std::invalid_argument(fmt::format("unknown trace generator kind '{}' (known: {})", kind, known));
}

// Every parameter of the kind, from the spec or its default; unknown names
// and missing required ones are errors.
std::map<std::string, double> resolve_parameters(const GeneratorSpec& spec, const GeneratorKindInfo& info) {
  std::string known;
  for (const auto& p : info.parameters) known += (known.empty() ? "" : ", ") + p.name;
  for (const auto& [name, value] : spec.parameters) {
    const bool is_known = std::any_of(info.parameters.begin(), info.parameters.end(),
                                      [&, &name = name](const GeneratorParameterInfo& p) { return p.name == name; });
    if (!is_known)
      throw std::invalid_argument(fmt::format("unknown parameter '{}' for trace generator '{}' (known: {})", name,
                                              info.kind, known.empty() ? "none" : known));
    if (std::isnan(value))
      throw std::invalid_argument(fmt::format("parameter '{}' of trace generator '{}' is NaN", name, info.kind));
  }
  std::map<std::string, double> values;
  for (const auto& p : info.parameters) {
    const auto given = spec.parameters.find(p.name);
    if (given != spec.parameters.end())
      values[p.name] = given->second;
    else if (p.default_value)
      values[p.name] = *p.default_value;
    else
      throw std::invalid_argument(fmt::format("trace generator '{}' needs parameter '{}' ({})", info.kind, p.name, p.help));
  }
  return values;
}

int whole_number(double value, const std::string& name) {
  if (value != std::floor(value) || std::abs(value) > 1e6)
    throw std::invalid_argument(fmt::format("parameter '{}' = {} must be a whole number", name, value));
  return static_cast<int>(value);
}

Trace generate_kind(const GeneratorSpec& spec) {
  const GeneratorKindInfo& info = kind_named(spec.kind);
  if (!spec.points.empty() && spec.kind != "step")
    throw std::invalid_argument(fmt::format("points are for the 'step' generator, not '{}'", spec.kind));
  auto v = resolve_parameters(spec, info);
  const double duration = spec.duration_s, step = spec.step_s;
  if (spec.kind == "constant") return constant_trace(v["mbps"], duration, step);
  if (spec.kind == "step") return step_trace(spec.points, duration);
  if (spec.kind == "square") return square_trace(v["low"], v["high"], v["period"], duration, v["duty"]);
  if (spec.kind == "sine") return sine_trace(v["mean"], v["amplitude"], v["period"], duration, step);
  if (spec.kind == "ar1")
    return ar1_trace(Ar1Parameters{v["mean"], v["spread"], v["correlation"], v["floor"], v["ceiling"]}, duration, step,
                     spec.seed);
  // markov: the only kind left (kind_named accepted it).
  return markov_trace(MarkovParameters{v["mean"], whole_number(v["states"], "states"), v["depth"], v["hold"], v["noise"]},
                      duration, step, spec.seed);
}

}  // namespace

const std::vector<GeneratorKindInfo>& generator_kinds() {
  static const std::vector<GeneratorKindInfo> kinds = make_kinds();
  return kinds;
}

Trace generate(const GeneratorSpec& spec) {
  if (!(spec.quantum_mbps >= 0))
    throw std::invalid_argument(fmt::format("rounding quantum {} Mbps must be >= 0", spec.quantum_mbps));
  Trace trace = generate_kind(spec);
  if (!spec.outages.empty()) trace = with_outages(trace, spec.outages);
  if (spec.target_mean_mbps) trace = scale_to_mean(trace, *spec.target_mean_mbps);
  if (spec.quantum_mbps > 0) trace = round_rates(trace, spec.quantum_mbps);
  return trace;
}

}  // namespace st::traces
