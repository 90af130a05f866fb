#include "core/train/system_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/util/yaml_fields.h"

namespace st::train {

nlohmann::json SystemOptions::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : fields()) {
    if (f.key.empty() || !f.show) continue;
    auto value = f.show(*this);
    if (!value.is_null()) out[f.key] = std::move(value);
  }
  return out;
}

const OptionField* SystemOptions::field(const std::string& key) const {
  for (const auto& f : fields())
    if (!f.key.empty() && f.key == key) return &f;
  return nullptr;
}

const OptionField* SystemOptions::field_with_flag(const std::string& flag) const {
  for (const auto& f : fields())
    if (!f.flag.empty() && f.flag == flag) return &f;
  return nullptr;
}

namespace detail {

void require(bool ok, const char* field, const std::string& why) {
  if (!ok) throw std::invalid_argument(fmt::format("train config: {} {}", field, why));
}

double parse_number_text(const std::string& flag, const std::string& text, double min, double max) {
  std::istringstream in(text);
  double value = 0;
  in >> value;
  if (!in || !in.eof() || !std::isfinite(value))
    throw std::invalid_argument(fmt::format("{} {}: not a number", flag, text));
  if (value < min || value > max)
    throw std::invalid_argument(fmt::format("{} {}: must be in [{}, {}]", flag, text, min, max));
  return value;
}

long long parse_integer_text(const std::string& flag, const std::string& text, long long min, long long max) {
  std::istringstream in(text);
  long long value = 0;
  in >> value;
  if (!in || !in.eof()) throw std::invalid_argument(fmt::format("{} {}: not an integer", flag, text));
  if (value < min || value > max)
    throw std::invalid_argument(fmt::format("{} {}: must be in [{}, {}]", flag, text, min, max));
  return value;
}

bool parse_switch_text(const std::string& flag, const std::string& text) {
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw std::invalid_argument(fmt::format("{} {}: expected true or false", flag, text));
}

std::string parse_choice_text(const std::string& flag, const std::string& text,
                              const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), text) == choices.end())
    throw std::invalid_argument(fmt::format("{} {}: not one of {}", flag, text, fmt::join(choices, ", ")));
  return text;
}

double read_number(const util::YamlField& f, double min, double max) { return f.number_in(min, max); }
long long read_integer(const util::YamlField& f, long long min, long long max) { return f.integer_in(min, max); }
bool read_boolean(const util::YamlField& f) { return f.boolean(); }
std::string read_choice(const util::YamlField& f, const std::vector<std::string>& choices) {
  return f.text_in(choices);
}

}  // namespace detail
}  // namespace st::train
