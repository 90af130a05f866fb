#pragma once
// What a fuzz target may throw. Each reader documents one error type for bad
// input (a named file, field or line); a target catches exactly those and
// lets anything else escape, so libFuzzer records it as a crash: a
// std::out_of_range, a bad_alloc or a foreign exception means a check is
// missing.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/util/yaml_fields.h"
#include "traces/trace.h"

namespace st::fuzz {

inline std::string as_text(const uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// For the YAML readers: the input as a document named fuzz.yaml, handed to
// read(top). Bad input must come back as a util::YamlError (file, key path,
// line) or, for a trace file it names, a traces::TraceError.
template <class Read>
int read_yaml_input(const uint8_t* data, std::size_t size, Read read) {
  try {
    read(util::YamlField::from_string(as_text(data, size), "fuzz.yaml"));
  } catch (const util::YamlError&) {
  } catch (const traces::TraceError&) {
  }
  return 0;
}

}  // namespace st::fuzz
