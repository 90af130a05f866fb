// Mahimahi packet-delivery traces (see trace_io.h for the conventions).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <istream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <utility>

#include "traces/io_util.h"
#include "traces/trace_io.h"

namespace st::traces {
namespace {

// Bounds that keep a hostile or mistaken file from exhausting memory.
constexpr unsigned long long kMaxTimestampMs = 1000ULL * 3600 * 24 * 365 * 10;  // ten years
constexpr double kMaxBins = 10'000'000;
constexpr double kMaxPacketsWritten = 2e9;

// Runs of equal timestamps: (millisecond, packets). Far smaller than one
// entry per line for fast links, which deliver many packets per millisecond.
using TimestampRuns = std::vector<std::pair<unsigned long long, unsigned long long>>;

TimestampRuns read_timestamp_runs(std::istream& in, const std::string& source) {
  TimestampRuns runs;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const std::string_view content = detail::trim(text);
    if (content.empty()) continue;
    const auto timestamp = detail::parse_unsigned(content);
    if (!timestamp)
      throw TraceError(source, line,
                       fmt::format("'{}' is not a millisecond timestamp (a non-negative integer)", detail::printable(content)));
    if (*timestamp > kMaxTimestampMs)
      throw TraceError(source, line, fmt::format("timestamp {} ms is beyond ten years", *timestamp));
    if (!runs.empty() && *timestamp < runs.back().first)
      throw TraceError(source, line,
                       fmt::format("timestamp {} ms is before the previous one, {} ms (timestamps must not decrease)",
                                   *timestamp, runs.back().first));
    if (!runs.empty() && runs.back().first == *timestamp)
      ++runs.back().second;
    else
      runs.emplace_back(*timestamp, 1);
  }
  detail::check_read_complete(in, source);
  if (runs.empty()) throw TraceError(source, 0, fmt::format("no timestamps in {} lines", line));
  if (runs.back().first == 0)
    throw TraceError(source, line, "the last timestamp sets the loop period and must be > 0 ms");
  return runs;
}

}  // namespace

Trace parse_mahimahi(std::istream& in, const std::string& source, double bin_s) {
  if (!std::isfinite(bin_s) || bin_s <= 0)
    throw std::invalid_argument(fmt::format("Mahimahi bin {} s must be finite and > 0", bin_s));
  const TimestampRuns runs = read_timestamp_runs(in, source);
  const double period_ms = static_cast<double>(runs.back().first);
  const double bins = std::max(1.0, std::round(period_ms / (bin_s * 1000)));
  if (bins > kMaxBins)
    throw TraceError(source, 0, fmt::format("{} ms in bins of {} s would make more than {} steps", period_ms, bin_s, kMaxBins));
  const std::size_t bin_count = static_cast<std::size_t>(bins);
  const double bin_ms = period_ms / bins;

  std::vector<double> packets(bin_count, 0.0);
  for (const auto& [timestamp, count] : runs) {
    // Bin (start, end] holds the timestamp; 0 goes to the first bin.
    const double position = std::ceil(static_cast<double>(timestamp) / bin_ms) - 1;
    const auto bin = static_cast<std::size_t>(std::clamp(position, 0.0, bins - 1));
    packets[bin] += static_cast<double>(count);
  }
  std::vector<TraceStep> steps(bin_count);
  for (std::size_t i = 0; i < bin_count; ++i) {
    steps[i].time_s = static_cast<double>(i) * bin_ms / 1000;
    steps[i].mbps = packets[i] * kMahimahiPacketBits / (bin_ms * 1000);  // bits per ms / 1000 = Mbit/s
  }
  return trace_ending_at(std::move(steps), period_ms / 1000, source);
}

Trace read_mahimahi(const std::string& path, double bin_s) {
  auto in = detail::open_trace_file(path);
  return parse_mahimahi(in, path, bin_s);
}

void write_mahimahi(const Trace& trace, std::ostream& out) {
  if (trace.empty()) throw TraceError(trace.source(), 0, "cannot write an empty trace");
  const double period_ms = std::round(trace.duration_s() * 1000);
  if (period_ms < 1) throw TraceError(trace.source(), 0, "a Mahimahi trace must last at least 1 ms");
  if (trace.mean_mbps() * 1000 * period_ms / kMahimahiPacketBits > kMaxPacketsWritten)
    throw TraceError(trace.source(), 0, fmt::format("more than {} packets: too long or too fast for Mahimahi", kMaxPacketsWritten));

  const auto& steps = trace.steps();
  const auto period = static_cast<unsigned long long>(period_ms);
  double capacity_bits = 0;  // capacity delivered before the current step
  double next_packet = 0.5;  // release threshold of the next packet, in packets
  // The newest timestamp is held back: when it falls in the last step it is
  // moved to the period's end instead of adding a packet (see below).
  std::optional<unsigned long long> pending;
  bool pending_in_last_step = false;
  std::string buffer;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    // The first step holds from 0 even when the trace starts later (step_at's rule).
    const double begin_ms = i == 0 ? 0.0 : steps[i].time_s * 1000;
    const double end_ms = std::min(trace.step_end_s(i) * 1000, period_ms);
    const double bits_per_ms = steps[i].mbps * 1000;
    const double step_bits = bits_per_ms * std::max(0.0, end_ms - begin_ms);
    while (bits_per_ms > 0 && next_packet * kMahimahiPacketBits <= capacity_bits + step_bits) {
      const double release_ms = begin_ms + (next_packet * kMahimahiPacketBits - capacity_bits) / bits_per_ms;
      if (pending) buffer += fmt::format("{}\n", *pending);
      pending = static_cast<unsigned long long>(std::min(std::max(1.0, std::ceil(release_ms - 1e-9)), period_ms));
      pending_in_last_step = i + 1 == steps.size();
      next_packet += 1;
      if (buffer.size() > (1 << 16)) {
        out << buffer;
        buffer.clear();
      }
    }
    capacity_bits += step_bits;
  }
  // The last timestamp is the loop period, so the file must end exactly at
  // the trace's duration: move a packet of the last step there, or add one
  // (an outage at the end then gets a single packet).
  if (pending && pending_in_last_step) {
    buffer += fmt::format("{}\n", period);
  } else {
    if (pending) buffer += fmt::format("{}\n", *pending);
    if (!pending || *pending < period) buffer += fmt::format("{}\n", period);
  }
  out << buffer;
}

}  // namespace st::traces
