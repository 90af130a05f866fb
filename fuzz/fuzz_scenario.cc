// The scenario reader (apps/scenario.cc) on arbitrary YAML: clusters,
// links, model, dataset, systems and their options, compute. Bad input must
// come back as a util::YamlError (file, key path, line) or, for a named
// trace file, a traces::TraceError. Relative paths resolve against the
// shipped scenarios' folder, so the seeds (copies of those scenarios) reach
// the profile and trace readers; nothing is written.
#include "apps/scenario.h"
#include "core/util/yaml_fields.h"
#include "fuzz/fuzz_expected_errors.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto top = st::util::YamlField::from_string(st::fuzz::as_text(data, size), "fuzz.yaml");
    (void)st::apps::parse_scenario(top, ST_SCENARIO_DIR);
  } catch (const st::util::YamlError&) {
  } catch (const st::traces::TraceError&) {
  }
  return 0;
}
