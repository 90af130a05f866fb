#pragma once
// The source a build compiled, for manifest.json: the git commit and
// whether tracked files differed from it at build time. Recorded results
// then say which code made them, beside the machine that ran them
// (core/device/host_description.h). The definition is generated at every
// build by cmake/build_info.cmake.
#include <string>

namespace st::util {

struct BuildInfo {
  std::string commit;     // 40 hex digits, or "unknown" (no git, not a clone)
  bool modified = false;  // tracked files differed from the commit when it was built
};

const BuildInfo& build_info();

}  // namespace st::util
