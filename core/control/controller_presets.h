#pragma once
// Named sets of controller options. The options that keep a bytes-bound
// link busy were built and measured one at a time, each off by default so
// that older results do not change (docs/control-utilisation.md lists them
// in order); a scenario names the settled set instead of copying its keys,
// and may still set any key beside the name, which then wins.
//
// * `bytes-bound`: every option docs/control-utilisation.md marks "yes"
//   (the `-drain` systems' estimator, overrun and timing choices), with the
//   paper's density rule left as it is.
// * `keep-busy`: `bytes-bound` filling 85% of the link
//   (`link_utilization: 0.85`), probing twice the estimate where no exchange
//   was timed, a probe every iteration and four early ticks: the `-busy`
//   systems of docs/paper-tta-resnet18.md, "Keeping the link busy".
#include <string>
#include <vector>

#include "core/control/controller.h"

namespace st::control {

// The names apply_controller_preset knows, in the order docs list them.
const std::vector<std::string>& controller_preset_names();

// Sets preset `name`'s options on `options`, leaving every other option as
// it is. Throws std::invalid_argument naming the known presets.
void apply_controller_preset(ControllerOptions& options, const std::string& name);

}  // namespace st::control
