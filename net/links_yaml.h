#pragma once
// The YAML form of the network description (topology_config.h), shared by
// scenario files (docs/scenarios.md, `links:`) and the sim backend's
// `--sim-config` files (docs/sim.md). Errors name the file, the key path and
// the line (util::YamlError).
#include <string>

#include "core/util/yaml_fields.h"
#include "net/topology_config.h"

namespace st::net {

// `clusters` (name, nodes) plus the link keys of parse_links, read from one
// mapping (the sim config's layout). Relative trace paths are resolved
// against `base_dir` (the directory of the file they appear in).
TopologyConfig parse_topology(const util::YamlField& top, const std::string& base_dir);
// lan, wan, mtu, seed and trace_offset (seconds) read from `links` (for
// clusters already in `topology`). It does not check `links` for unknown
// keys; its caller knows which keys sit beside them, and whether
// `trace_offset: auto` (drawn from each run's seed) may stand there
// (scenarios: it is read by the caller then; a sim config has no seed).
void parse_links(const util::YamlField& links, TopologyConfig& topology, const std::string& base_dir,
                 bool offset_auto_allowed = false);
WanDirection parse_wan_direction(const util::YamlField& field, const std::string& base_dir);

// `path` relative to `base_dir` unless it is absolute (or either is empty).
std::string resolve_path(const std::string& path, const std::string& base_dir);

}  // namespace st::net
