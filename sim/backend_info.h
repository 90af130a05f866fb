#pragma once
#include <string>

namespace st::sim {

// One line describing the linked ns-3 (for `stellatrain info` and manifests);
// it runs an empty simulation, so a broken ns-3 install shows up here.
std::string backend_info();

}  // namespace st::sim
