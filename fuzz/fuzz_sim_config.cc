// The sim backend's config reader (sim/sim_config.cc: clusters, links,
// traces, compute) on arbitrary YAML. Relative paths (profiles, traces)
// resolve against the shipped scenarios' folder, so the seeds reach the
// profile reader.
#include "fuzz/fuzz_expected_errors.h"
#include "sim/sim_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return st::fuzz::read_yaml_input(
      data, size, [](const st::util::YamlField& top) { (void)st::sim::parse_sim_config(top, ST_SCENARIO_DIR); });
}
