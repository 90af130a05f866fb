#include "core/util/yaml_fields.h"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

namespace st::util {
namespace {

// Aliases make a YAML document a graph: one that refers to itself has no
// end, and nested aliases can expand a few lines into billions of nodes.
// Every reader here walks the tree, so a document must stay within these
// (far above what any scenario needs; the fuzz targets found both cases).
constexpr int kMaxDepth = 200;
constexpr std::size_t kMaxExpandedNodes = 200000;

struct TreeBudget {
  const std::string& source;
  std::size_t nodes = 0;
};

void check_tree(const YAML::Node& node, int depth, TreeBudget& budget) {
  const auto where = [&] {
    const auto mark = node.Mark();
    return mark.line >= 0 ? fmt::format("{}: line {}", budget.source, mark.line + 1) : budget.source;
  };
  if (depth > kMaxDepth)
    throw YamlError(fmt::format("{}: nested more than {} levels deep (an alias that refers to itself?)", where(),
                                kMaxDepth));
  if (++budget.nodes > kMaxExpandedNodes)
    throw YamlError(fmt::format("{}: the document expands to more than {} values (aliases of aliases?)", where(),
                                kMaxExpandedNodes));
  if (node.IsSequence()) {
    for (const auto& child : node) check_tree(child, depth + 1, budget);
  } else if (node.IsMap()) {
    for (const auto& entry : node) {
      check_tree(entry.first, depth + 1, budget);
      check_tree(entry.second, depth + 1, budget);
    }
  }
}

void check_tree(const YAML::Node& root, const std::string& source) {
  TreeBudget budget{source};
  check_tree(root, 0, budget);
}

}  // namespace

YamlField YamlField::load_file(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw YamlError(fmt::format("{}: cannot read the file", path));
  } catch (const YAML::Exception& e) {
    throw YamlError(fmt::format("{}: line {}: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw YamlError(fmt::format("{}: the file must be a YAML mapping (key: value lines)", path));
  check_tree(root, path);
  return YamlField(root, path, "");
}

YamlField YamlField::from_string(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw YamlError(fmt::format("{}: line {}: {}", source, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw YamlError(fmt::format("{}: the text must be a YAML mapping", source));
  check_tree(root, source);
  return YamlField(root, source, "");
}

std::string YamlField::child_path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

void YamlField::fail(const std::string& what) const {
  const auto mark = node_.Mark();
  const std::string where = path_.empty() ? std::string("top level") : path_;
  if (mark.line >= 0) throw YamlError(fmt::format("{}: {} (line {}): {}", file_, where, mark.line + 1, what));
  throw YamlError(fmt::format("{}: {}: {}", file_, where, what));
}

void YamlField::require_map() const {
  if (!node_.IsMap()) fail("expected a mapping (key: value)");
}

void YamlField::require_sequence() const {
  if (!node_.IsSequence()) fail("expected a list");
}

YamlField YamlField::at(const std::string& key) const {
  require_map();
  const YAML::Node child = node_[key];
  if (!child) fail(fmt::format("missing required key '{}'", key));
  return YamlField(child, file_, child_path(key));
}

YamlField YamlField::at(std::size_t index) const {
  require_sequence();
  if (index >= node_.size()) fail(fmt::format("no element {}", index));
  return YamlField(node_[index], file_, fmt::format("{}[{}]", path_, index));
}

std::size_t YamlField::size() const {
  require_sequence();
  return node_.size();
}

std::vector<std::string> YamlField::keys() const {
  require_map();
  std::vector<std::string> keys;
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) YamlField(entry.first, file_, path_).fail("a key must be plain text, not a list or mapping");
    keys.push_back(entry.first.Scalar());
  }
  return keys;
}

void YamlField::allow_only(std::initializer_list<const char*> allowed) const {
  (void)keys();  // every key plain text
  for (const auto& entry : node_) {
    const auto key = entry.first.Scalar();
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) {
      std::ostringstream list;
      for (const char* a : allowed) list << (list.tellp() > 0 ? ", " : "") << a;
      YamlField(entry.first, file_, child_path(key)).fail(fmt::format("unknown key (expected one of: {})", list.str()));
    }
  }
}

double YamlField::number() const {
  if (!node_.IsScalar()) fail("expected a number");
  double value = 0;
  try {
    value = node_.as<double>();
  } catch (const YAML::Exception&) {
    fail(fmt::format("'{}' is not a number", node_.Scalar()));
  }
  if (!std::isfinite(value)) fail(fmt::format("'{}' is not a finite number", node_.Scalar()));
  return value;
}

double YamlField::number_in(double min, double max) const {
  const double value = number();
  if (value < min || value > max) fail(fmt::format("{} is out of range [{}, {}]", value, min, max));
  return value;
}

long long YamlField::integer_in(long long min, long long max) const {
  const double value = number_in(static_cast<double>(min), static_cast<double>(max));
  if (value != std::floor(value)) fail(fmt::format("{} is not a whole number", value));
  return static_cast<long long>(value);
}

std::string YamlField::text() const {
  if (!node_.IsScalar()) fail("expected a text value");
  return node_.Scalar();
}

bool YamlField::boolean() const {
  if (!node_.IsScalar()) fail("expected true or false");
  try {
    return node_.as<bool>();
  } catch (const YAML::Exception&) {
    fail(fmt::format("'{}' is not true or false", node_.Scalar()));
  }
}

std::string YamlField::text_in(std::initializer_list<const char*> choices) const {
  return text_in(std::vector<std::string>(choices.begin(), choices.end()));
}

std::string YamlField::text_in(const std::vector<std::string>& choices) const {
  const std::string value = text();
  std::ostringstream list;
  for (const auto& c : choices) {
    if (value == c) return value;
    list << (list.tellp() > 0 ? ", " : "") << c;
  }
  fail(fmt::format("'{}' is not one of: {}", value, list.str()));
}

double YamlField::number_or(const std::string& key, double fallback, double min, double max) const {
  return has(key) ? at(key).number_in(min, max) : fallback;
}

long long YamlField::integer_or(const std::string& key, long long fallback, long long min, long long max) const {
  return has(key) ? at(key).integer_in(min, max) : fallback;
}

std::string YamlField::text_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? at(key).text() : fallback;
}

bool YamlField::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? at(key).boolean() : fallback;
}

}  // namespace st::util
