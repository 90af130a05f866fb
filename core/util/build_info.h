#pragma once
// The source a build compiled, for manifest.json: the git commit and
// whether tracked files differed from it at build time. Recorded results
// then say which code made them, beside the machine that ran them
// (core/device/host_description.h). The definition is generated at every
// build by cmake/build_info.cmake.
#include <optional>
#include <string>

namespace st::util {

struct BuildInfo {
  // The commit's hex digits, or "unknown" (no git, and not a clone nor
  // named by ST_SOURCE_COMMIT when it was built).
  std::string commit;
  // Tracked files differed from the commit when it was built; unknown
  // where git could not tell (not a clone, or git status failed).
  std::optional<bool> modified;
};

const BuildInfo& build_info();

}  // namespace st::util
