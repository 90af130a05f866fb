// The scenario reader (apps/scenario.cc) on arbitrary YAML: clusters,
// links, model, dataset, systems and their options, compute. Relative paths
// resolve against the shipped scenarios' folder, so the seeds (copies of
// those scenarios) reach the profile and trace readers; nothing is written.
#include "apps/scenario.h"
#include "fuzz/fuzz_expected_errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return st::fuzz::read_yaml_input(
      data, size, [](const st::util::YamlField& top) { (void)st::apps::parse_scenario(top, ST_SCENARIO_DIR); });
}
