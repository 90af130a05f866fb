// The sim backend's config reader (sim/sim_config.cc: clusters, links,
// traces, compute) on arbitrary YAML. Bad input must come back as a
// util::YamlError (file, key path, line) or, for a named trace file, a
// traces::TraceError. Relative paths (profiles, traces) resolve against the
// shipped scenarios' folder, so the seeds reach the profile reader.
#include "core/util/yaml_fields.h"
#include "fuzz/fuzz_expected_errors.h"
#include "sim/sim_config.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto top = st::util::YamlField::from_string(st::fuzz::as_text(data, size), "fuzz.yaml");
    (void)st::sim::parse_sim_config(top, ST_SCENARIO_DIR);
  } catch (const st::util::YamlError&) {
  } catch (const st::traces::TraceError&) {
  }
  return 0;
}
