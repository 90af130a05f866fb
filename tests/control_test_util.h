#pragma once
// Shared by the sources of control_test (control_test.cc,
// telemetry_test.cc, soonest_density_test.cc).
#include "core/telemetry/node_telemetry.h"

namespace st::testing {

// A node's telemetry for one iteration: 2 GPUs at 64 samples, 34-35 ms of
// compute plus a 1 ms gather, 150 kB exchanged in 30 ms with a 20 ms
// quickest exchange (120 Mbps net of latency).
telemetry::NodeTelemetry sample_telemetry(int rank);

}  // namespace st::testing
