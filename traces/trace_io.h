#pragma once
// Reading and writing traces: the project's CSV and Mahimahi's packet-delivery
// format. Every reader error is a TraceError naming the file and the 1-based
// line (docs/traces.md describes both formats).
#include <iosfwd>
#include <string>

#include "traces/trace.h"

namespace st::traces {

// CSV: `time_s,mbps[,delay_ms][,loss]`, one row per step. Lines starting with
// `#` and blank lines are skipped; one header row naming the columns may come
// before the first data row (its names set the column order). An empty
// delay_ms cell means "not given", an empty loss cell 0.
Trace read_trace_csv(const std::string& path);
Trace parse_trace_csv(std::istream& in, const std::string& source);
// Writes the comment (each of its lines prefixed "# "), a header and one row
// per step; numbers in their shortest exact form, so reading back gives the
// same trace. delay_ms / loss columns only when some step has them.
void write_trace_csv(const Trace& trace, std::ostream& out, const std::string& comment = "");

// Mahimahi: one integer millisecond timestamp per line, non-decreasing; each
// line is one 1500-byte packet delivery opportunity at that time, and the
// last timestamp is the loop period. Reading counts the opportunities in
// equal bins of about bin_s (the period split into round(period / bin_s)
// bins, so the trace keeps the period exactly); a packet at time t belongs
// to the bin (start, end] that holds t.
inline constexpr double kMahimahiPacketBits = 1500 * 8;
Trace read_mahimahi(const std::string& path, double bin_s = 1.0);
Trace parse_mahimahi(std::istream& in, const std::string& source, double bin_s = 1.0);
// Deterministic: packet k goes out when the trace's cumulative capacity
// reaches (k - 1/2) packets (rounded up to the millisecond), which spreads
// each step's packets evenly and carries fractions across steps; a last
// timestamp at the trace's duration keeps the loop period. Read back with
// the step length as bin, every bin is within one packet of the original.
// Delay and loss are not part of the format and are dropped.
void write_mahimahi(const Trace& trace, std::ostream& out);

enum class TraceFormat { csv, mahimahi };
// Guesses the format: a ".csv" name is CSV; otherwise the first non-blank
// line decides (a bare integer: Mahimahi; `#`, a comma or a header: CSV).
TraceFormat guess_trace_format(const std::string& path);
Trace read_trace(const std::string& path, double mahimahi_bin_s = 1.0);

}  // namespace st::traces
