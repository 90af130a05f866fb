#pragma once
// What a fuzz target may throw. Each reader documents one error type for bad
// input (a named file, field or line); a target catches exactly those and
// lets anything else escape, so libFuzzer records it as a crash: a
// std::out_of_range, a bad_alloc or a foreign exception means a check is
// missing.
#include <cstddef>
#include <cstdint>
#include <string>

namespace st::fuzz {

inline std::string as_text(const uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace st::fuzz
