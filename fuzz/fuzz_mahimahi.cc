// The Mahimahi packet-delivery reader (traces/mahimahi.cc) on arbitrary
// text. Byte 0 picks the bin width; an accepted trace must write back out
// as Mahimahi and as CSV without an error.
#include <sstream>
#include <stdexcept>

#include "fuzz/fuzz_expected_errors.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const double bin_s = 0.01 * (1 + data[0] % 200);  // 10 ms .. 2 s
  std::istringstream in(st::fuzz::as_text(data + 1, size - 1));
  st::traces::Trace trace;
  try {
    trace = st::traces::parse_mahimahi(in, "fuzz.mahi", bin_s);
  } catch (const st::traces::TraceError&) {
    return 0;
  }
  // Writing back is this target's own check, not the reader's work: only
  // for traces of ordinary length (a 20-hour file in 10 ms bins is 7 million
  // steps, which the reader accepts but writing out under ASan takes longer
  // than the fuzzer's 10 s per input).
  if (trace.steps().size() > 100000) return 0;
  std::ostringstream mahimahi, csv;
  st::traces::write_mahimahi(trace, mahimahi);
  st::traces::write_trace_csv(trace, csv);
  return 0;
}
