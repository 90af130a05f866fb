#pragma once
// Every message tag outside the collectives' (which set bit 31,
// core/collective/communicator.h, docs/collectives.md "Tag scheme"), listed
// in one place so that no two users of a transport share one.
#include <cstdint>

namespace st::comm::control_tags {

// The controller (core/telemetry/node_telemetry.h).
inline constexpr uint32_t kTelemetry = 0x7E000001u;
inline constexpr uint32_t kPlan = 0x7E000002u;
inline constexpr uint32_t kProbe = 0x7E000003u;
inline constexpr uint32_t kProbeReply = 0x7E000004u;
// cloudless-asgd-ga's accumulated gradients
// (core/train/systems/local_step/cloudless_asgd_system.cc).
inline constexpr uint32_t kAccumulation = 0x7E000010u;
// A rank's word that its run is done (core/train/run/run_end.h).
inline constexpr uint32_t kRunEnd = 0x7E000020u;

}  // namespace st::comm::control_tags
