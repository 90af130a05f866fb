#pragma once
// Strict reading of YAML files (scenarios, sim topologies, profiles): every
// error names the file, the key path (e.g. "wan[1].delay_ms") and the line;
// unknown keys are errors, never silently ignored. yaml-cpp does the
// parsing; this only adds the checks and the messages.
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace st::util {

class YamlError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A node and where it is: the file and its key path.
class YamlField {
 public:
  // Loads `path`; throws YamlError naming the file (unreadable, bad syntax
  // with its line, or not a mapping at the top).
  static YamlField load_file(const std::string& path);
  static YamlField from_string(const std::string& text, const std::string& source);

  YamlField(YAML::Node node, std::string file, std::string path) : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }  // "" at the top
  bool has(const std::string& key) const { return node_.IsMap() && node_[key]; }

  // Children by key or index; required ones throw when missing.
  YamlField at(const std::string& key) const;            // required
  YamlField at(std::size_t index) const;
  std::size_t size() const;                              // sequence length (throws if not a sequence)
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  // This mapping's keys in file order; throws naming a key that is not
  // plain text (YAML allows a list or a mapping as a key).
  std::vector<std::string> keys() const;
  // Throws naming the first key of this mapping not in `allowed`.
  void allow_only(std::initializer_list<const char*> allowed) const;
  void require_map() const;
  void require_sequence() const;

  double number() const;                          // this scalar as a finite number
  double number_in(double min, double max) const;  // and within [min, max]
  long long integer_in(long long min, long long max) const;
  std::string text() const;
  bool boolean() const;
  std::string text_in(std::initializer_list<const char*> choices) const;
  std::string text_in(const std::vector<std::string>& choices) const;

  // Optional children with a default when absent.
  double number_or(const std::string& key, double fallback, double min, double max) const;
  long long integer_or(const std::string& key, long long fallback, long long min, long long max) const;
  std::string text_or(const std::string& key, const std::string& fallback) const;
  bool boolean_or(const std::string& key, bool fallback) const;

  // "FILE: PATH (line N): what" as a YamlError.
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string child_path(const std::string& key) const;
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

}  // namespace st::util
