// The trace CSV format and the format guess (Mahimahi lives in mahimahi.cc).
#include "traces/trace_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <istream>
#include <ostream>
#include <sstream>

#include "traces/io_util.h"

namespace st::traces {
namespace {

using detail::parse_double;
using detail::trim;

enum Column { kTime, kMbps, kDelay, kLoss, kColumnCount };
constexpr std::array<const char*, kColumnCount> kColumnNames = {"time_s", "mbps", "delay_ms", "loss"};
constexpr int kAbsent = -1;

// Where each column sits in a row, from the header row or the first data row.
struct Layout {
  std::array<int, kColumnCount> position = {kAbsent, kAbsent, kAbsent, kAbsent};
  std::size_t cells = 0;
  std::size_t defined_at_line = 0;
  bool from_header = false;
};

std::vector<std::string_view> split_cells(std::string_view line) {
  std::vector<std::string_view> cells;
  std::size_t begin = 0;
  while (true) {
    const auto comma = line.find(',', begin);
    cells.push_back(trim(line.substr(begin, comma == std::string_view::npos ? std::string_view::npos : comma - begin)));
    if (comma == std::string_view::npos) return cells;
    begin = comma + 1;
  }
}

std::optional<Column> column_named(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "time_s" || lower == "time" || lower == "t") return kTime;
  if (lower == "mbps" || lower == "rate_mbps" || lower == "rate") return kMbps;
  if (lower == "delay_ms" || lower == "delay") return kDelay;
  if (lower == "loss") return kLoss;
  return std::nullopt;
}

// A header row starts with a letter (a number never does; "nan"/"inf" rows
// are caught as non-finite values, so they are not mistaken for headers).
bool looks_like_header(std::string_view first_cell) {
  if (first_cell.empty() || !std::isalpha(static_cast<unsigned char>(first_cell.front()))) return false;
  return !parse_double(first_cell).has_value();
}

Layout layout_from_header(const std::vector<std::string_view>& cells, const std::string& source, std::size_t line) {
  Layout layout;
  layout.cells = cells.size();
  layout.defined_at_line = line;
  layout.from_header = true;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto column = column_named(cells[i]);
    if (!column)
      throw TraceError(source, line,
                       fmt::format("unknown column '{}' in the header (expected time_s, mbps, delay_ms, loss)",
                                   detail::printable(cells[i])));
    if (layout.position[*column] != kAbsent)
      throw TraceError(source, line, fmt::format("column '{}' appears twice in the header", kColumnNames[*column]));
    layout.position[*column] = static_cast<int>(i);
  }
  for (Column required : {kTime, kMbps})
    if (layout.position[required] == kAbsent)
      throw TraceError(source, line, fmt::format("the header has no '{}' column", kColumnNames[required]));
  return layout;
}

Layout layout_from_first_row(std::size_t cells, const std::string& source, std::size_t line) {
  if (cells < 2 || cells > 4)
    throw TraceError(source, line,
                     fmt::format("expected 2 to 4 columns (time_s,mbps[,delay_ms][,loss]), got {}", cells));
  Layout layout;
  layout.cells = cells;
  layout.defined_at_line = line;
  for (std::size_t i = 0; i < cells; ++i) layout.position[i] = static_cast<int>(i);
  return layout;
}

// Reads one row into a step and checks it against the previous step.
class RowReader {
 public:
  RowReader(const std::string& source) : source_(source) {}

  TraceStep read(const std::vector<std::string_view>& cells, const Layout& layout, std::size_t line,
                 const TraceStep* previous) {
    line_ = line;
    if (cells.size() != layout.cells)
      fail(fmt::format("expected {} columns (as in the {} at line {}), got {}", layout.cells,
                       layout.from_header ? "header" : "first row", layout.defined_at_line, cells.size()));
    TraceStep step;
    step.time_s = number(cells, layout, kTime, false).value();
    step.mbps = number(cells, layout, kMbps, false).value();
    if (!std::isfinite(step.time_s) || step.time_s < 0) fail(fmt::format("time {} s must be finite and >= 0", step.time_s));
    if (previous && !(step.time_s > previous->time_s))
      fail(fmt::format("time {} s is not after the previous row's {} s (times must increase)", step.time_s,
                       previous->time_s));
    if (!std::isfinite(step.mbps) || step.mbps < 0 || step.mbps > kMaxTraceMbps)
      fail(fmt::format("rate {} Mbps must be finite, >= 0 and at most {}", step.mbps, kMaxTraceMbps));
    if (const auto delay = number(cells, layout, kDelay, true)) {
      if (!std::isfinite(*delay) || *delay < 0) fail(fmt::format("delay {} ms must be finite and >= 0", *delay));
      step.delay_ms = *delay;
    }
    if (const auto loss = number(cells, layout, kLoss, true)) {
      if (!(*loss >= 0 && *loss < 1)) fail(fmt::format("loss {} must be in [0, 1)", *loss));
      step.loss = *loss;
    }
    return step;
  }

 private:
  // The cell of `column`; nothing when the column is absent, or empty and optional.
  std::optional<double> number(const std::vector<std::string_view>& cells, const Layout& layout, Column column,
                               bool optional) {
    const int position = layout.position[column];
    if (position == kAbsent) return std::nullopt;
    const std::string_view cell = cells[static_cast<std::size_t>(position)];
    if (cell.empty() && optional) return std::nullopt;
    const auto value = parse_double(cell);
    if (!value) fail(fmt::format("{} '{}' is not a number", kColumnNames[column], detail::printable(cell)));
    return value;
  }

  [[noreturn]] void fail(const std::string& what) const { throw TraceError(source_, line_, what); }

  const std::string& source_;
  std::size_t line_ = 0;
};

std::string lowercase_extension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return extension;
}

}  // namespace

Trace parse_trace_csv(std::istream& in, const std::string& source) {
  std::vector<TraceStep> steps;
  std::optional<Layout> layout;
  RowReader rows(source);
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const std::string_view content = trim(text);
    if (content.empty() || content.front() == '#') continue;
    const auto cells = split_cells(content);
    if (!layout && looks_like_header(cells.front())) {
      layout = layout_from_header(cells, source, line);
      continue;
    }
    if (!layout) layout = layout_from_first_row(cells.size(), source, line);
    steps.push_back(rows.read(cells, *layout, line, steps.empty() ? nullptr : &steps.back()));
  }
  detail::check_read_complete(in, source);
  if (steps.empty())
    throw TraceError(source, 0,
                     fmt::format("no data rows in {} line{} (expected rows of time_s,mbps)", line, line == 1 ? "" : "s"));
  return Trace(std::move(steps), source);
}

Trace read_trace_csv(const std::string& path) {
  auto in = detail::open_trace_file(path);
  return parse_trace_csv(in, path);
}

void write_trace_csv(const Trace& trace, std::ostream& out, const std::string& comment) {
  if (!comment.empty()) {
    std::istringstream lines(comment);
    std::string text;
    while (std::getline(lines, text)) out << "# " << text << '\n';
  }
  const auto& steps = trace.steps();
  const bool has_delay = std::any_of(steps.begin(), steps.end(), [](const TraceStep& s) { return s.delay_ms >= 0; });
  const bool has_loss = std::any_of(steps.begin(), steps.end(), [](const TraceStep& s) { return s.loss > 0; });
  out << "time_s,mbps" << (has_delay ? ",delay_ms" : "") << (has_loss ? ",loss" : "") << '\n';
  for (const auto& step : steps) {
    std::string row = fmt::format("{},{}", step.time_s, step.mbps);
    if (has_delay) row += step.delay_ms >= 0 ? fmt::format(",{}", step.delay_ms) : ",";
    if (has_loss) row += fmt::format(",{}", step.loss);
    out << row << '\n';
  }
}

TraceFormat guess_trace_format(const std::string& path) {
  if (lowercase_extension(path) == ".csv") return TraceFormat::csv;
  auto in = detail::open_trace_file(path);
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const std::string_view content = trim(text);
    if (content.empty()) continue;
    if (detail::parse_unsigned(content)) return TraceFormat::mahimahi;
    if (content.front() == '#' || content.find(',') != std::string_view::npos || looks_like_header(content))
      return TraceFormat::csv;
    throw TraceError(path, line,
                     fmt::format("cannot tell the format: '{}' is neither a CSV row (time_s,mbps) nor a Mahimahi "
                                 "millisecond timestamp",
                                 detail::printable(content)));
  }
  detail::check_read_complete(in, path);
  throw TraceError(path, 0, "empty file (no rows, no timestamps)");
}

Trace read_trace(const std::string& path, double mahimahi_bin_s) {
  if (guess_trace_format(path) == TraceFormat::csv) return read_trace_csv(path);
  return read_mahimahi(path, mahimahi_bin_s);
}

}  // namespace st::traces
