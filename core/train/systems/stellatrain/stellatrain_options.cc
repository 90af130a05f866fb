#include "core/train/systems/stellatrain/stellatrain_options.h"

#include <fmt/format.h>

#include <stdexcept>
#include <type_traits>

#include "core/compress/compressor_names.h"
#include "core/control/controller_presets.h"
#include "core/train/config.h"
#include "core/util/yaml_fields.h"

namespace st::train {
namespace {

using O = StellaTrainOptions;

// Options `a` and `b` exclude each other; the error sits at `a` (saying
// `a_message`), or at `b` or the preset where the file does not write `a`,
// and says which of them a preset set and how to turn it off (`off`).
[[noreturn]] void fail_exclusive(const util::YamlField& f, const char* a, const char* a_message, const char* b,
                                 const char* off) {
  std::string note;
  if (f.has("preset")) {
    for (const char* key : {a, b})
      if (!f.has(key))
        note += fmt::format("; the preset sets {}: write `{}: {}` beside it to turn it off", key, key, off);
  }
  if (f.has(a)) f.at(a).fail(a_message + note);
  f.at(f.has(b) ? b : "preset").fail(fmt::format("{} {}{}", a, a_message, note));
}

// `controller: on | off | {preset, interval_s, early_ticks, min_density, max_density,
// safety, batch, growth, probe_growth, slow_start_ticks, initial_mbps,
// link_utilization, sparsity_cost, probe_every_iteration, probe_at_start, drain_every_ticks,
// drain_iterations, window_includes_load, decrease_once, resume_at_delivered,
// probe_ceiling, skip_peer_lag, skip_early_arrivals, pair_by_iteration,
// early_density_switch, fresh_overruns, samples_by_plan,
// after_previous_iteration, wait_decrease, drain_at_delivered}`
// (docs/control-options.md); a map
// means on. `preset` (controller_presets.h) is applied first, so the keys
// beside it override its values whatever their order in the file.
void read_controller(O& o, const util::YamlField& f) {
  if (f.is_scalar()) {
    o.controller = f.text_in({"on", "off"}) == "on";
    return;
  }
  f.allow_only({"preset", "interval_s", "early_ticks", "min_density", "max_density", "safety", "batch", "growth", "probe_growth",
                "slow_start_ticks", "initial_mbps", "link_utilization", "sparsity_cost", "probe_every_iteration",
                "probe_at_start", "drain_every_ticks", "drain_iterations", "window_includes_load", "decrease_once",
                "resume_at_delivered", "probe_ceiling", "skip_peer_lag", "skip_early_arrivals", "pair_by_iteration",
                "early_density_switch", "fresh_overruns", "samples_by_plan", "after_previous_iteration",
                "wait_decrease", "drain_at_delivered"});
  o.controller = true;
  auto& c = o.control;
  if (f.has("preset")) control::apply_controller_preset(c, f.at("preset").text_in(control::controller_preset_names()));
  c.interval_s = f.number_or("interval_s", c.interval_s, 1e-3, 1e6);
  c.early_ticks = static_cast<int>(f.integer_or("early_ticks", c.early_ticks, 1, 1000000));
  c.min_density = f.number_or("min_density", c.min_density, 1e-6, 1);
  c.max_density = f.number_or("max_density", c.max_density, 1e-6, 1);
  if (c.max_density < c.min_density) f.at("max_density").fail(fmt::format("is below min_density {}", c.min_density));
  c.safety = f.number_or("safety", c.safety, 0.01, 1);
  c.adapt_batch = f.boolean_or("batch", c.adapt_batch);
  c.estimator.growth = f.number_or("growth", c.estimator.growth, 1, 10);
  c.estimator.probe_growth = f.number_or("probe_growth", c.estimator.probe_growth, 1, 10);
  c.estimator.slow_start_ticks =
      static_cast<int>(f.integer_or("slow_start_ticks", c.estimator.slow_start_ticks, 0, 100));
  c.estimator.initial_mbps = f.number_or("initial_mbps", c.estimator.initial_mbps, 0.01, 1e6);
  c.link_utilization = f.number_or("link_utilization", c.link_utilization, 0, 0.99);
  c.sparsity_cost = f.number_or("sparsity_cost", c.sparsity_cost, 0, 1000);
  c.probe_every_iteration = f.boolean_or("probe_every_iteration", c.probe_every_iteration);
  c.probe_at_start = f.boolean_or("probe_at_start", c.probe_at_start);
  c.drain_every_ticks = static_cast<int>(f.integer_or("drain_every_ticks", c.drain_every_ticks, 0, 1000000));
  c.drain_iterations = static_cast<int>(f.integer_or("drain_iterations", c.drain_iterations, 1, 1000000));
  c.window_includes_load = f.boolean_or("window_includes_load", c.window_includes_load);
  c.estimator.decrease_once = f.boolean_or("decrease_once", c.estimator.decrease_once);
  c.estimator.wait_decrease = f.number_or("wait_decrease", c.estimator.wait_decrease, 0.01, 1);
  c.estimator.resume_at_delivered = f.boolean_or("resume_at_delivered", c.estimator.resume_at_delivered);
  c.estimator.drain_at_delivered = f.boolean_or("drain_at_delivered", c.estimator.drain_at_delivered);
  c.estimator.probe_ceiling = f.number_or("probe_ceiling", c.estimator.probe_ceiling, 1, 1000);
  c.estimator.skip_peer_lag = f.boolean_or("skip_peer_lag", c.estimator.skip_peer_lag);
  c.estimator.skip_early_arrivals = f.boolean_or("skip_early_arrivals", c.estimator.skip_early_arrivals);
  c.estimator.pair_by_iteration = f.boolean_or("pair_by_iteration", c.estimator.pair_by_iteration);
  if (c.estimator.pair_by_iteration && (c.estimator.skip_peer_lag || c.estimator.skip_early_arrivals))
    fail_exclusive(f, "pair_by_iteration", "replaces skip_peer_lag and skip_early_arrivals; set one",
                   c.estimator.skip_peer_lag ? "skip_peer_lag" : "skip_early_arrivals", "false");
  c.early_density_switch = f.boolean_or("early_density_switch", c.early_density_switch);
  c.estimator.fresh_overruns = f.boolean_or("fresh_overruns", c.estimator.fresh_overruns);
  c.estimator.samples_by_plan = f.boolean_or("samples_by_plan", c.estimator.samples_by_plan);
  if (c.estimator.samples_by_plan && c.estimator.fresh_overruns)
    fail_exclusive(f, "samples_by_plan", "replaces fresh_overruns; set one", "fresh_overruns", "false");
  c.estimator.after_previous_iteration =
      f.boolean_or("after_previous_iteration", c.estimator.after_previous_iteration);
  if (c.sparsity_cost > 0 && c.link_utilization > 0)
    fail_exclusive(f, "sparsity_cost", "and link_utilization are two density rules; set one", "link_utilization", "0");
}

// Every option as resolved, a preset's among them; the preset's name is
// not shown, so that a run's manifest says what ran whether its scenario
// named the set or wrote it out.
nlohmann::json show_controller(const O& o) {
  if (!o.controller) return "off";
  const auto& c = o.control;
  nlohmann::json shown = {{"interval_s", c.interval_s},     {"min_density", c.min_density},
                          {"max_density", c.max_density},   {"safety", c.safety},
                          {"adapt_batch", c.adapt_batch},   {"growth", c.estimator.growth},
                          {"initial_mbps", c.estimator.initial_mbps}};
  // Named only when on, so that results of the paper's rule read as before.
  if (c.link_utilization > 0) shown["link_utilization"] = c.link_utilization;
  if (c.sparsity_cost > 0) shown["sparsity_cost"] = c.sparsity_cost;
  if (c.probe_every_iteration) shown["probe_every_iteration"] = true;
  if (c.probe_at_start) shown["probe_at_start"] = true;
  if (c.window_includes_load) shown["window_includes_load"] = true;
  if (c.estimator.decrease_once) shown["decrease_once"] = true;
  if (c.estimator.wait_decrease != 1) shown["wait_decrease"] = c.estimator.wait_decrease;
  if (c.estimator.resume_at_delivered) shown["resume_at_delivered"] = true;
  if (c.estimator.drain_at_delivered) shown["drain_at_delivered"] = true;
  if (c.estimator.skip_peer_lag) shown["skip_peer_lag"] = true;
  if (c.estimator.skip_early_arrivals) shown["skip_early_arrivals"] = true;
  if (c.estimator.pair_by_iteration) shown["pair_by_iteration"] = true;
  if (c.early_density_switch) shown["early_density_switch"] = true;
  if (c.estimator.fresh_overruns) shown["fresh_overruns"] = true;
  if (c.estimator.samples_by_plan) shown["samples_by_plan"] = true;
  if (c.estimator.after_previous_iteration) shown["after_previous_iteration"] = true;
  if (c.estimator.probe_ceiling != control::BandwidthEstimatorOptions{}.probe_ceiling)
    shown["probe_ceiling"] = c.estimator.probe_ceiling;
  if (c.early_ticks != 1) shown["early_ticks"] = c.early_ticks;
  if (c.drain_every_ticks > 0) {
    shown["drain_every_ticks"] = c.drain_every_ticks;
    shown["drain_iterations"] = c.drain_iterations;
  }
  if (c.estimator.probe_growth > 0) shown["probe_growth"] = c.estimator.probe_growth;
  if (c.estimator.slow_start_ticks > 0) shown["slow_start_ticks"] = c.estimator.slow_start_ticks;
  return shown;
}

control::ControllerOptions& control_of(O& o) { return o.control; }
control::BandwidthEstimatorOptions& estimator_of(O& o) { return o.control.estimator; }
DensityWarmup& warmup_of(O& o) { return o.warmup; }

// A `train` flag that sets one number (FLOAT or INT, from the member's
// type) of a part of the options that has no scenario key of its own: the
// scenario writes it inside `controller:` or `density_warmup:`.
template <typename Part, typename T>
OptionField number_flag(const char* flag, Part& (*part)(O&), T Part::*member, double min, double max,
                        const char* help) {
  OptionField f{"", flag, help};
  f.value_name = std::is_integral_v<T> ? "INT" : "FLOAT";
  f.read_text = [flag, part, member, min, max](SystemOptions& o, const std::string& text) {
    auto& target = part(static_cast<O&>(o));
    if constexpr (std::is_integral_v<T>)
      target.*member = static_cast<T>(detail::parse_integer_text(flag, text, static_cast<long long>(min),
                                                                 static_cast<long long>(max)));
    else
      target.*member = detail::parse_number_text(flag, text, min, max);
  };
  return f;
}

// A `train` on/off flag for one option of a part of the options, as
// number_flag is for a number: the scenario writes it inside `controller:`.
template <typename Part>
OptionField switch_flag(const char* flag, Part& (*part)(O&), bool Part::*member, const char* help) {
  OptionField f{"", flag, help, true};
  f.read_text = [flag, part, member](SystemOptions& o, const std::string& text) {
    part(static_cast<O&>(o)).*member = detail::parse_switch_text(flag, text);
  };
  return f;
}

// A number (FLOAT or INT, from the member's type, as number_flag) with a
// scenario key and a `train` flag that the manifest lists only where it
// acts (`shown`), so runs that do not use it keep their manifests.
template <typename T>
OptionField number_shown_when(const char* key, const char* flag, T O::*member, double min, double max,
                              const char* help, bool (*shown)(const O&)) {
  OptionField f{key, flag, help};
  f.value_name = std::is_integral_v<T> ? "INT" : "FLOAT";
  f.read = [member, min, max](SystemOptions& o, const util::YamlField& y) {
    if constexpr (std::is_integral_v<T>)
      static_cast<O&>(o).*member =
          static_cast<T>(detail::read_integer(y, static_cast<long long>(min), static_cast<long long>(max)));
    else
      static_cast<O&>(o).*member = detail::read_number(y, min, max);
  };
  f.read_text = [flag, member, min, max](SystemOptions& o, const std::string& text) {
    if constexpr (std::is_integral_v<T>)
      static_cast<O&>(o).*member = static_cast<T>(
          detail::parse_integer_text(flag, text, static_cast<long long>(min), static_cast<long long>(max)));
    else
      static_cast<O&>(o).*member = detail::parse_number_text(flag, text, min, max);
  };
  f.show = [member, shown](const SystemOptions& o) {
    const auto& s = static_cast<const O&>(o);
    return shown(s) ? nlohmann::json(s.*member) : nlohmann::json();
  };
  return f;
}

// `density_warmup: {iterations, start}` (density_warmup.h).
OptionField warmup_field() {
  OptionField f{"density_warmup", "", "The first iterations' density falls geometrically from `start`"};
  f.read = [](SystemOptions& o, const util::YamlField& y) {
    y.allow_only({"iterations", "start"});
    auto& w = static_cast<O&>(o).warmup;
    w.iterations = static_cast<int>(y.integer_or("iterations", w.iterations, 0, 1000000000));
    w.start = y.number_or("start", w.start, 1e-6, 1);
  };
  f.show = [](const SystemOptions& o) {
    const auto& w = static_cast<const O&>(o).warmup;
    return w.on() ? nlohmann::json{{"iterations", w.iterations}, {"start", w.start}} : nlohmann::json();
  };
  return f;
}

}  // namespace

using detail::require;

void StellaTrainOptions::apply_preset(const std::string& name) {
  if (name != "measured" && name != "paper")
    throw std::invalid_argument(fmt::format("train config: preset '{}' is not one of measured, paper", name));
  preset = name;
  controller = true;
  compensation = name == "measured" ? "lookahead" : "none";
  fp16_values = name == "measured";
}

std::vector<OptionField> StellaTrainOptions::make_fields() {
  // Read first, so that the options beside it override it.
  OptionField preset{"preset", "--preset", "measured (controller, lookahead, fp16) or paper (controller, no compensation, fp32)"};
  preset.value_name = "{measured,paper}";
  preset.read = [](SystemOptions& o, const util::YamlField& f) {
    static_cast<O&>(o).apply_preset(f.text_in({"measured", "paper"}));
  };
  preset.read_text = [](SystemOptions& o, const std::string& text) {
    static_cast<O&>(o).apply_preset(detail::parse_choice_text("--preset", text, {"measured", "paper"}));
  };
  preset.show = [](const SystemOptions& o) {
    const auto& name = static_cast<const O&>(o).preset;
    return name.empty() ? nlohmann::json() : nlohmann::json(name);
  };
  OptionField controller{"controller", "--controller,!--no-controller",
                         "Adapt density and batch split to the measured bandwidth (docs/control.md)", true};
  controller.read = [](SystemOptions& o, const util::YamlField& f) { read_controller(static_cast<O&>(o), f); };
  controller.read_text = [](SystemOptions& o, const std::string& text) {
    static_cast<O&>(o).controller = detail::parse_switch_text("--controller", text);
  };
  controller.show = [](const SystemOptions& o) { return show_controller(static_cast<const O&>(o)); };
  // Listed before --controller/--no-controller and the controller's other
  // flags, which are applied after it (apps/system_flags.cc applies flags
  // in field order) and so override it. The on/off flags can only turn an
  // option on, so a preset's switches stay on.
  OptionField control_preset{"", "--control-preset",
                             "A named set of controller options, which turns the controller on: bytes-bound or "
                             "keep-busy (core/control/controller_presets.h); --no-controller and the numeric "
                             "--control-* flags override it"};
  control_preset.value_name = "{bytes-bound,keep-busy}";
  control_preset.read_text = [](SystemOptions& o, const std::string& text) {
    auto& s = static_cast<O&>(o);
    s.controller = true;
    control::apply_controller_preset(
        s.control, detail::parse_choice_text("--control-preset", text, control::controller_preset_names()));
  };
  OptionField batch_control{"", "!--no-batch-control", "Keep equal batches (the controller adapts only the density)",
                            true};
  batch_control.read_text = [](SystemOptions& o, const std::string& text) {
    static_cast<O&>(o).control.adapt_batch = detail::parse_switch_text("--no-batch-control", text);
  };
  return Fields<O>()
      .custom(preset)
      .number("density", &O::density, 1e-6, 1, "--density", "Fraction of gradient elements sent")
      .choice("compressor", &O::compressor, compress::base_compressor_names(), "--compressor",
              "The compressor (docs/compression.md)")
      .integer("staleness", &O::staleness, 0, 1, "--staleness", "0 or 1")
      .boolean("fp16", &O::fp16_values, "--fp16", "Send gradient values as fp16")
      .choice("lazy_momentum", &O::lazy_momentum, {"decay", "exact"}, "--lazy-momentum",
              "The sparse SGD's untouched entries: decay (paper) or exact")
      .choice("momentum_at", &O::momentum_at, {"master", "node"}, "--momentum-at",
              "master (sparse SGD momentum) or node (momentum correction)")
      .boolean("momentum_masking", &O::momentum_masking, "--momentum-masking",
               "With momentum_at node: zero the sent entries' velocity")
      .choice("compensation", &O::compensation, {"none", "predict", "lookahead", "dc"}, "--compensation",
              "Staleness 1: none, predict, lookahead or dc (docs/convergence.md)")
      .custom(number_shown_when("dc_lambda", "--dc-lambda", &O::dc_lambda, 0, 1e6,
                                "Delay compensation strength (compensation dc)",
                                [](const O& o) { return o.compensation == "dc"; }))
      // Shown only when on, so the manifests of runs without it stay as they were.
      .custom(number_shown_when("clip_norm", "--clip-norm", &O::clip_norm, 0, 1e9,
                                "Local gradient clipping: the largest L2 norm of a tensor's gradient, mean over a node's workers (0: off)",
                                [](const O& o) { return o.clip_norm > 0; }))
      .custom(number_shown_when("dense_up_to", "--dense-up-to", &O::dense_up_to, 0, 1000000000,
                                "Tensors of at most this many elements are sent whole every iteration (0: none)",
                                [](const O& o) { return o.dense_up_to > 0; }))
      .custom(warmup_field())
      .custom(number_flag("--density-warmup-iterations", warmup_of, &DensityWarmup::iterations, 0, 1000000000,
                          "Density warm-up length in iterations (0: off)"))
      .custom(number_flag("--density-warmup-start", warmup_of, &DensityWarmup::start, 1e-6, 1,
                          "Density warm-up's first density"))
      .custom(control_preset)
      .custom(controller)
      .custom(number_flag("--control-interval", control_of, &control::ControllerOptions::interval_s, 1e-3, 1e6,
                          "Controller tick, seconds of the run's clock"))
      .custom(number_flag("--control-early-ticks", control_of, &control::ControllerOptions::early_ticks, 1, 1000000,
                          "The first this many controller ticks come every quarter tick"))
      .custom(number_flag("--min-density", control_of, &control::ControllerOptions::min_density, 1e-6, 1,
                          "Controller's lower density bound"))
      .custom(number_flag("--max-density", control_of, &control::ControllerOptions::max_density, 1e-6, 1,
                          "Controller's upper density bound"))
      .custom(number_flag("--control-safety", control_of, &control::ControllerOptions::safety, 0.01, 1,
                          "Fraction of the overlap window the exchange may fill"))
      .custom(number_flag("--control-link-utilization", control_of, &control::ControllerOptions::link_utilization, 0,
                          0.99,
                          "Keep the link busy this fraction of each iteration where the round trip sets the pace (0: off)"))
      .custom(number_flag("--control-sparsity-cost", control_of, &control::ControllerOptions::sparsity_cost, 0, 1000,
                          "Choose the density that reaches the target soonest, iterations growing as "
                          "1 + this / sqrt(density) (0: off; docs/control.md)"))
      .custom(number_flag("--control-drain-every-ticks", control_of, &control::ControllerOptions::drain_every_ticks, 0,
                          1000000, "Drain the WAN queue every this many ticks, so probes see the latency floor (0: never)"))
      .custom(number_flag("--control-drain-iterations", control_of, &control::ControllerOptions::drain_iterations, 1,
                          1000000, "Iterations at min density in each drain"))
      .custom(number_flag("--control-growth", estimator_of, &control::BandwidthEstimatorOptions::growth, 1, 10,
                          "Bandwidth probing factor per tick"))
      .custom(number_flag("--control-probe-growth", estimator_of, &control::BandwidthEstimatorOptions::probe_growth, 1,
                          10, "Probing factor per tick where no exchange could be timed (default: --control-growth)"))
      .custom(number_flag("--control-slow-start-ticks", estimator_of,
                          &control::BandwidthEstimatorOptions::slow_start_ticks, 0, 100,
                          "The first ticks whose overrun keeps the estimate (TCP's slow start; 0: none)"))
      .custom(number_flag("--control-initial-mbps", estimator_of, &control::BandwidthEstimatorOptions::initial_mbps,
                          0.01, 1e6, "Bandwidth estimate before a measurement"))
      .custom(number_flag("--control-wait-decrease", estimator_of, &control::BandwidthEstimatorOptions::wait_decrease,
                          0.01, 1, "An overrun cuts the estimate by this share of the waiting fraction (1: all of it)"))
      .custom(switch_flag("--control-probe-at-start", control_of, &control::ControllerOptions::probe_at_start,
                          "Probe the latency before the first iteration, while nothing is queued"))
      .custom(switch_flag("--control-skip-peer-lag", estimator_of, &control::BandwidthEstimatorOptions::skip_peer_lag,
                          "Leave a node's lag behind the quickest node out of the measured transfer time"))
      .custom(switch_flag("--control-skip-early-arrivals", estimator_of,
                          &control::BandwidthEstimatorOptions::skip_early_arrivals,
                          "Leave out of the measured rate an iteration whose peer's bytes arrived before it asked"))
      .custom(switch_flag("--control-pair-by-iteration", estimator_of,
                          &control::BandwidthEstimatorOptions::pair_by_iteration,
                          "Measure the rate over whole iterations, every node's sample together"))
      .custom(switch_flag("--control-early-density-switch", control_of,
                          &control::ControllerOptions::early_density_switch,
                          "Each node takes a new density from its own next iteration (batches still switch together)"))
      .custom(switch_flag("--control-fresh-overruns", estimator_of, &control::BandwidthEstimatorOptions::fresh_overruns,
                          "Start an overrun episode only where the newest iteration waited beyond the plan"))
      .custom(switch_flag("--control-samples-by-plan", estimator_of,
                          &control::BandwidthEstimatorOptions::samples_by_plan,
                          "Judge each wait by the density its iteration ran at; leave mixed-density iterations "
                          "out of the measured rate"))
      .custom(switch_flag("--control-after-previous-iteration", estimator_of,
                          &control::BandwidthEstimatorOptions::after_previous_iteration,
                          "Time each iteration's bytes from when the node's previous iteration's exchanges ended"))
      .custom(switch_flag("--control-drain-at-delivered", estimator_of,
                          &control::BandwidthEstimatorOptions::drain_at_delivered,
                          "In an overrun episode's later ticks, plan at least the delivered rate less the share "
                          "to drain"))
      .custom(batch_control);
}

void StellaTrainOptions::validate(const TrainConfig&) const {
  require(density > 0 && density <= 1, "density", "must be in (0, 1]");
  require(staleness == 0 || staleness == 1, "staleness", "must be 0 or 1");
  require(lazy_momentum == "decay" || lazy_momentum == "exact", "lazy_momentum",
          fmt::format("'{}' is not one of decay, exact", lazy_momentum));
  require(compensation == "none" || compensation == "predict" || compensation == "lookahead" || compensation == "dc",
          "staleness_compensation", fmt::format("'{}' is not one of none, predict, lookahead, dc", compensation));
  require(dc_lambda >= 0, "dc_lambda", "must be >= 0");
  require(clip_norm == 0 || clip_norm >= 1e-6, "clip_norm", "must be 0 (off) or at least 1e-6");
  // Masking zeroes the velocity of what is sent, so a tensor sent whole
  // would lose its momentum every step.
  require(dense_up_to == 0 || !(momentum_at == "node" && momentum_masking), "dense_up_to",
          "with momentum_masking would zero a whole tensor's velocity every step; turn one off");
  require(warmup.iterations >= 0, "density_warmup.iterations", "must be >= 0");
  require(warmup.start > 0 && warmup.start <= 1, "density_warmup.start", "must be in (0, 1]");
  require(momentum_at == "master" || momentum_at == "node", "momentum_at",
          fmt::format("'{}' is not one of master, node", momentum_at));
  require(compress::is_base_compressor(compressor), "compressor",
          fmt::format("'{}' is not one of {}", compressor, compress::joined_names()));
  if (!controller) return;
  try {
    control::validate(control);
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format("train config: {}", e.what()));
  }
}

void StellaTrainOptions::check_entry(const util::YamlField& entry) const {
  if (entry.has("dc_lambda") && compensation != "dc") entry.at("dc_lambda").fail("only applies with compensation: dc");
}

std::optional<ControlledSystem> StellaTrainOptions::controlled() const {
  if (!controller) return std::nullopt;
  return ControlledSystem{&control,          density,           staleness, compressor == "thresholdv16",
                          fp16_values,       warmup.iterations, static_cast<std::size_t>(dense_up_to)};
}

}  // namespace st::train
