#pragma once
// Small text helpers shared by the trace readers (internal to st_traces).
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include "traces/trace.h"

namespace st::traces::detail {

inline std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// Text from a file, fit for an error message: at most 60 characters, bytes
// that are not printable ASCII shown as '?' (a binary file must not garble
// the terminal).
inline std::string printable(std::string_view text) {
  std::string shown;
  for (char c : text.substr(0, 60)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (text.size() > 60) shown += "...";
  return shown;
}

// The whole cell as a number, or nothing. from_chars: no locale, no leading
// whitespace surprises; a leading '+' is accepted as people write it.
inline std::optional<double> parse_double(std::string_view cell) {
  if (!cell.empty() && cell.front() == '+') cell.remove_prefix(1);
  if (cell.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (error != std::errc() || end != cell.data() + cell.size()) return std::nullopt;
  return value;
}

inline std::optional<unsigned long long> parse_unsigned(std::string_view cell) {
  if (cell.empty()) return std::nullopt;
  unsigned long long value = 0;
  const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
  if (error != std::errc() || end != cell.data() + cell.size()) return std::nullopt;
  return value;
}

// Opens a file for reading or throws a TraceError that says why.
inline std::ifstream open_trace_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) throw TraceError(path, 0, "is a directory, not a trace file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceError(path, 0, fmt::format("cannot open: {}", std::strerror(errno)));
  return in;
}

// A reader stopped by an I/O error must not pass off what it read as the whole file.
inline void check_read_complete(const std::istream& in, const std::string& source) {
  if (in.bad()) throw TraceError(source, 0, "read error");
}

}  // namespace st::traces::detail
