#include "tests/csv_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

namespace st::testing {

namespace {

// The cell as a number: NaN when empty, nothing when it is not all number.
std::optional<double> number_in(const std::string& cell) {
  if (cell.empty()) return std::nan("");
  char* end = nullptr;
  const double value = std::strtod(cell.c_str(), &end);
  if (end != cell.c_str() + cell.size()) return std::nullopt;
  return value;
}

}  // namespace

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

std::size_t CsvTable::column(const std::string& name) const {
  const auto at = std::find(header.begin(), header.end(), name);
  if (at == header.end()) ADD_FAILURE() << source << " has no column " << name;
  return static_cast<std::size_t>(at - header.begin());
}

std::vector<std::string> CsvTable::texts(const std::string& name) const {
  const std::size_t index = column(name);
  // A missing column (already a failure) still gives one cell per row,
  // so callers may index the rows without checking.
  if (index == header.size()) return std::vector<std::string>(rows.size());
  std::vector<std::string> out;
  for (const auto& row : rows) out.push_back(index < row.size() ? row[index] : std::string());
  return out;
}

std::vector<double> CsvTable::numbers(const std::string& name) const {
  std::vector<double> out;
  for (const auto& text : texts(name)) {
    const auto value = number_in(text);
    if (!value) ADD_FAILURE() << source << ": column " << name << " holds " << text << ", not a number";
    out.push_back(value.value_or(std::nan("")));
  }
  return out;
}

CsvTable parse_csv(const std::string& text, const std::string& source) {
  CsvTable table;
  table.source = source;
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line)) {
    ADD_FAILURE() << source << " is empty";
    return table;
  }
  table.header = split_csv_line(line);
  while (std::getline(in, line))
    if (!line.empty()) table.rows.push_back(split_csv_line(line));
  return table;
}

std::map<std::string, std::vector<double>> numeric_columns(const CsvTable& table) {
  std::map<std::string, std::vector<double>> columns;
  for (std::size_t c = 0; c < table.header.size(); ++c) {
    std::vector<double> values;
    bool numeric = true;
    for (const auto& row : table.rows) {
      const auto value = number_in(c < row.size() ? row[c] : std::string());
      if (!value) {
        numeric = false;
        break;
      }
      values.push_back(*value);
    }
    if (numeric) columns[table.header[c]] = std::move(values);
  }
  return columns;
}

std::vector<std::vector<int>> parse_batch_cell(const std::string& cell) {
  std::vector<std::vector<int>> nodes;
  std::istringstream per_node(cell);
  for (std::string node; std::getline(per_node, node, '|');) {
    nodes.emplace_back();
    std::istringstream per_gpu(node);
    for (std::string gpu; std::getline(per_gpu, gpu, ';');) nodes.back().push_back(std::stoi(gpu));
  }
  return nodes;
}

CsvTable read_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << "cannot read " << path;
    CsvTable empty;
    empty.source = path.string();
    return empty;
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path.string());
}

}  // namespace st::testing
