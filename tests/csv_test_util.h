#pragma once
// The results CSVs (iterations.csv, control.csv, link.csv, eval.csv), read
// back by the tests that check them. One reader for every suite, so each
// test names the columns it checks instead of counting commas.
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace st::testing {

// One CSV line's cells. A cell in double quotes (control.csv's reason) may
// hold commas; "" inside it is one quote.
std::vector<std::string> split_csv_line(const std::string& line);

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  // The named column's index; a test failure naming the column and the
  // file when there is none (then header.size()).
  std::size_t column(const std::string& name) const;
  // Every row's cell in the named column, as text or as a number: one per
  // row, "" (NaN as a number) where a row, or the header, lacks it.
  std::vector<std::string> texts(const std::string& name) const;
  std::vector<double> numbers(const std::string& name) const;

  std::string source;  // the file it was read from, for messages
};

// The file's header and rows. A file that cannot be read is a test failure
// naming it, and an empty table.
CsvTable read_csv(const std::filesystem::path& path);
// The same from text already read (`source` names it in messages).
CsvTable parse_csv(const std::string& text, const std::string& source);

// The columns whose every cell is a number or empty (NaN), by name:
// control.csv's batch and reason are left out.
std::map<std::string, std::vector<double>> numeric_columns(const CsvTable& table);

// control.csv's batch cell ("32;32|16;16": nodes split by '|', each node's
// GPUs by ';'), per node and GPU.
std::vector<std::vector<int>> parse_batch_cell(const std::string& cell);

}  // namespace st::testing
