// The trace CSV reader (traces/trace_io.cc) on arbitrary text. A trace it
// accepts must hold together: times increasing, rates finite and >= 0, and
// it must survive a write/read round trip.
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "fuzz/fuzz_expected_errors.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::istringstream in(st::fuzz::as_text(data, size));
  st::traces::Trace trace;
  try {
    trace = st::traces::parse_trace_csv(in, "fuzz.csv");
  } catch (const st::traces::TraceError&) {
    return 0;
  }
  std::ostringstream out;
  st::traces::write_trace_csv(trace, out);
  std::istringstream back(out.str());
  (void)st::traces::parse_trace_csv(back, "fuzz-round-trip.csv");  // must not throw
  return 0;
}
