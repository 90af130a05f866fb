// `stellatrain trace`: generate, inspect, convert and plot bandwidth traces.
#include "apps/trace_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "traces/generators.h"
#include "traces/trace_io.h"

namespace st::apps {
namespace {

using traces::Trace;
using traces::TraceFormat;

double parse_number(const std::string& text, const std::string& what) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("{}: '{}' is not a number", what, text));
}

// "A:B" into two numbers; `what` names the option for the error.
std::pair<double, double> parse_pair(const std::string& text, const std::string& what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument(fmt::format("{}: '{}' is not of the form A:B", what, text));
  return {parse_number(text.substr(0, colon), what), parse_number(text.substr(colon + 1), what)};
}

std::string lowercase_extension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension;
}

// The output format from --format, or from the file name.
TraceFormat output_format(const std::string& path, const std::string& format) {
  if (format == "csv") return TraceFormat::csv;
  if (format == "mahimahi") return TraceFormat::mahimahi;
  const std::string extension = lowercase_extension(path);
  if (extension == ".csv") return TraceFormat::csv;
  if (extension == ".up" || extension == ".down" || extension == ".mahi" || extension == ".mahimahi" || extension == ".mm")
    return TraceFormat::mahimahi;
  throw std::invalid_argument(fmt::format(
      "cannot tell the format of '{}' from its name (.csv, or .up/.down/.mahi/.mm for Mahimahi): add --format csv|mahimahi",
      path));
}

const char* format_name(TraceFormat format) { return format == TraceFormat::csv ? "csv" : "mahimahi"; }

void write_trace(const Trace& trace, std::ostream& out, TraceFormat format, const std::string& comment) {
  if (format == TraceFormat::csv)
    traces::write_trace_csv(trace, out, comment);
  else
    traces::write_mahimahi(trace, out);
}

void write_trace_file(const Trace& trace, const std::string& path, TraceFormat format, const std::string& comment) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
  write_trace(trace, out, format, comment);
  out.close();
  if (!out) throw std::runtime_error(fmt::format("writing {} failed: {}", path, std::strerror(errno)));
}

// --- gen ---------------------------------------------------------------------

struct GenOptions {
  std::string kind;
  std::vector<std::string> parameters;  // NAME=VALUE
  std::string points;                   // T:MBPS,T:MBPS,...
  std::vector<std::string> outages;     // START:DURATION
  std::uint64_t seed = 1;
  double duration_s = 60;
  double step_s = 1;
  std::optional<double> mean_mbps;
  double quantum_mbps = 0.001;
  std::string out;
  std::string format = "auto";
};

traces::GeneratorSpec spec_from(const GenOptions& o) {
  traces::GeneratorSpec spec;
  spec.kind = o.kind;
  for (const auto& assignment : o.parameters) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0)
      throw std::invalid_argument(fmt::format("--param '{}': expected NAME=VALUE, e.g. mean=115", assignment));
    const std::string name = assignment.substr(0, equals);
    spec.parameters[name] = parse_number(assignment.substr(equals + 1), "--param " + name);
  }
  if (!o.points.empty()) {
    std::stringstream list(o.points);
    for (std::string point; std::getline(list, point, ',');) spec.points.push_back(parse_pair(point, "--points"));
  }
  for (const auto& outage : o.outages) {
    const auto [start, length] = parse_pair(outage, "--outage");
    spec.outages.push_back({start, length});
  }
  spec.seed = o.seed;
  spec.duration_s = o.duration_s;
  spec.step_s = o.step_s;
  spec.target_mean_mbps = o.mean_mbps;
  spec.quantum_mbps = o.quantum_mbps;
  return spec;
}

// The command that makes this trace again, in canonical form (recorded in
// the file's first comment line).
std::string command_line(const GenOptions& o, const traces::GeneratorSpec& spec) {
  std::string command = fmt::format("stellatrain trace gen --kind {}", spec.kind);
  for (const auto& [name, value] : spec.parameters) command += fmt::format(" -p {}={}", name, value);
  if (!o.points.empty()) command += fmt::format(" --points {}", o.points);
  for (const auto& outage : spec.outages) command += fmt::format(" --outage {}:{}", outage.start_s, outage.duration_s);
  command += fmt::format(" --seed {} --duration {} --step {}", spec.seed, spec.duration_s, spec.step_s);
  if (spec.target_mean_mbps) command += fmt::format(" --mean {}", *spec.target_mean_mbps);
  if (spec.quantum_mbps != 0.001) command += fmt::format(" --quantum {}", spec.quantum_mbps);
  if (!o.out.empty()) command += fmt::format(" --out {}", o.out);
  if (o.format != "auto") command += fmt::format(" --format {}", o.format);
  return command;
}

std::string kinds_help() {
  std::string help = "Kinds and their parameters (-p NAME=VALUE):\n";
  for (const auto& kind : traces::generator_kinds()) {
    help += fmt::format("  {:<9} {}{}\n", kind.kind, kind.help, kind.seeded ? " [uses --seed]" : "");
    if (kind.kind == "step") help += "            --points T:MBPS,T:MBPS,... (change times and rates)\n";
    for (const auto& p : kind.parameters)
      help += fmt::format("            {}{}: {}\n", p.name,
                          p.default_value ? fmt::format(" (default {})", *p.default_value) : " (required)", p.help);
  }
  return help;
}

void add_gen(CLI::App& trace_cmd) {
  auto options = std::make_shared<GenOptions>();
  auto& o = *options;
  auto* cmd = trace_cmd.add_subcommand("gen", "Generate a synthetic trace");
  cmd->footer(kinds_help());
  cmd->add_option("--kind", o.kind, "constant, step, square, sine, ar1 or markov")->required();
  cmd->add_option("-p,--param", o.parameters, "Generator parameter NAME=VALUE (repeatable)");
  cmd->add_option("--points", o.points, "step: change points T:MBPS,T:MBPS,...");
  cmd->add_option("--outage", o.outages, "Rate 0 for START:DURATION seconds (repeatable)");
  cmd->add_option("--seed", o.seed, "Seed of the random kinds")->capture_default_str();
  cmd->add_option("--duration", o.duration_s, "Seconds")->capture_default_str();
  cmd->add_option("--step", o.step_s, "Seconds between rate changes (grid kinds)")->capture_default_str();
  cmd->add_option("--mean", o.mean_mbps, "Finally scale to this time-weighted mean, Mbps");
  cmd->add_option("--quantum", o.quantum_mbps, "Round rates to this many Mbps (0: exact)")->capture_default_str();
  cmd->add_option("--out", o.out, "Output file (default: CSV on stdout)");
  cmd->add_option("--format", o.format, "auto (from --out's name), csv or mahimahi")
      ->check(CLI::IsMember({"auto", "csv", "mahimahi"}))
      ->capture_default_str();
  cmd->callback([options] {
    const auto& o = *options;
    const auto spec = spec_from(o);
    const Trace trace = traces::generate(spec);
    const std::string comment =
        fmt::format("generated by: {}\nmean {:.3f} Mbps, min {:.3f}, max {:.3f}, stddev {:.3f}, {} steps, {} s",
                    command_line(o, spec), trace.mean_mbps(), trace.min_mbps(), trace.max_mbps(), trace.stddev_mbps(),
                    trace.steps().size(), trace.duration_s());
    if (o.out.empty()) {
      write_trace(trace, std::cout, o.format == "mahimahi" ? TraceFormat::mahimahi : TraceFormat::csv, comment);
      return;
    }
    write_trace_file(trace, o.out, output_format(o.out, o.format), comment);
    std::cerr << fmt::format("wrote {}: mean {:.3f} Mbps over {} s\n", o.out, trace.mean_mbps(), trace.duration_s());
  });
}

// --- stats, convert, plot --------------------------------------------------

// Seconds at rate 0 (outages), which a mean hides.
double outage_seconds(const Trace& trace) {
  double total = 0;
  for (std::size_t i = 0; i < trace.steps().size(); ++i)
    if (trace.steps()[i].mbps == 0) total += trace.step_end_s(i) - trace.steps()[i].time_s;
  return total;
}

void print_stats(const std::string& path, double bin_s, bool as_json) {
  const TraceFormat format = traces::guess_trace_format(path);
  const Trace trace = traces::read_trace(path, bin_s);
  if (as_json) {
    const nlohmann::json stats = {{"file", path},
                                  {"format", format_name(format)},
                                  {"steps", trace.steps().size()},
                                  {"start_s", trace.start_s()},
                                  {"duration_s", trace.duration_s()},
                                  {"mean_mbps", trace.mean_mbps()},
                                  {"min_mbps", trace.min_mbps()},
                                  {"max_mbps", trace.max_mbps()},
                                  {"stddev_mbps", trace.stddev_mbps()},
                                  {"outage_s", outage_seconds(trace)}};
    fmt::print("{}\n", stats.dump(2));
    return;
  }
  fmt::print("file      {} ({})\n", path, format_name(format));
  fmt::print("steps     {}\n", trace.steps().size());
  fmt::print("duration  {:g} s (from {:g} s)\n", trace.duration_s(), trace.start_s());
  fmt::print("mean      {:.3f} Mbps\n", trace.mean_mbps());
  fmt::print("min       {:.3f} Mbps\n", trace.min_mbps());
  fmt::print("max       {:.3f} Mbps\n", trace.max_mbps());
  fmt::print("stddev    {:.3f} Mbps\n", trace.stddev_mbps());
  fmt::print("outage    {:g} s at 0 Mbps\n", outage_seconds(trace));
}

void add_stats(CLI::App& trace_cmd) {
  struct Options {
    std::string path;
    double bin_s = 1;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = trace_cmd.add_subcommand("stats", "Mean, min, max, stddev and duration of a trace file");
  cmd->add_option("file", options->path, "Trace (CSV or Mahimahi)")->required();
  cmd->add_option("--bin", options->bin_s, "Mahimahi input: seconds per step")->capture_default_str();
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->callback([options] { print_stats(options->path, options->bin_s, options->json); });
}

void add_convert(CLI::App& trace_cmd) {
  struct Options {
    std::string in, out, format = "auto";
    double bin_s = 1;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = trace_cmd.add_subcommand("convert", "Convert between CSV and Mahimahi");
  cmd->add_option("in", options->in, "Input trace (format guessed)")->required();
  cmd->add_option("out", options->out, "Output trace")->required();
  cmd->add_option("--format", options->format, "auto (from the output's name), csv or mahimahi")
      ->check(CLI::IsMember({"auto", "csv", "mahimahi"}))
      ->capture_default_str();
  cmd->add_option("--bin", options->bin_s, "Mahimahi input: seconds per step")->capture_default_str();
  cmd->callback([options] {
    const auto& o = *options;
    const TraceFormat format = output_format(o.out, o.format);
    const Trace trace = traces::read_trace(o.in, o.bin_s);
    write_trace_file(trace, o.out, format, fmt::format("converted from {} by stellatrain trace convert", o.in));
    std::cerr << fmt::format("wrote {} ({}): mean {:.3f} Mbps over {:g} s\n", o.out, format_name(format),
                             trace.mean_mbps(), trace.duration_s());
  });
}

void add_plot(CLI::App& trace_cmd) {
  struct Options {
    std::string path, out, title;
    double bin_s = 1;
  };
  auto options = std::make_shared<Options>();
  auto* cmd = trace_cmd.add_subcommand("plot", "Plot a trace into a PNG (python3 with matplotlib)");
  cmd->add_option("file", options->path, "Trace (CSV or Mahimahi)")->required();
  cmd->add_option("--out", options->out, "PNG file (default: the trace's name with .png)");
  cmd->add_option("--title", options->title, "Plot title (default: the file name)");
  cmd->add_option("--bin", options->bin_s, "Mahimahi input: seconds per step")->capture_default_str();
  cmd->callback([options] {
    const auto& o = *options;
    const std::string out = o.out.empty() ? std::filesystem::path(o.path).replace_extension(".png").string() : o.out;
    const std::string title = o.title.empty() ? std::filesystem::path(o.path).filename().string() : o.title;
    plot_trace_file(o.path, out, title, o.bin_s);
    std::cerr << fmt::format("wrote {}\n", out);
  });
}

}  // namespace

void add_trace_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("trace", "Bandwidth traces: gen, stats, convert, plot");
  cmd->require_subcommand(1);
  add_gen(*cmd);
  add_stats(*cmd);
  add_convert(*cmd);
  add_plot(*cmd);
}

}  // namespace st::apps
