#pragma once
// What every node reports to the controller after each iteration
// (docs/control.md): its compute times per local GPU, the batch each GPU
// ran, the density it compressed with, how long its gradient exchange kept
// the network busy and how many bytes it delivered, and per-peer bytes over
// the last second. Travels over the Transport (tag kTelemetryTag) to rank
// 0, encoded with MessagePack (nlohmann-json); decode() checks every field
// and names the one that is wrong.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/control_tags.h"

namespace st::telemetry {

// Control traffic keeps bit 31 clear (the collectives own tags with it
// set); every such tag is listed in core/comm/control_tags.h.
constexpr uint32_t kTelemetryTag = comm::control_tags::kTelemetry;
constexpr uint32_t kPlanTag = comm::control_tags::kPlan;
// Latency probes: rank 0 sends one to each node at every controller tick,
// the node echoes it at once; the round trip is timed on rank 0's clock.
constexpr uint32_t kProbeTag = comm::control_tags::kProbe;
constexpr uint32_t kProbeReplyTag = comm::control_tags::kProbeReply;

struct NodeTelemetry {
  int rank = 0;
  int iteration = 0;
  double time_s = 0;           // executor clock when the report was made
  double forward_ms = 0;       // mean over local GPUs
  double backward_ms = 0;      // mean over local GPUs
  double gather_ms = 0;
  double wait_ms = 0;          // the forward waited this long for parameters
  double pipeline_ms = 0;      // end of backward to the last layer's update
  double iteration_ms = 0;
  // Reading the master and loading it into the replicas. Reported only
  // where the controller counts it (ControllerOptions::window_includes_load)
  // and sent only when above 0: telemetry crosses the simulated WAN, so a
  // run whose controller does not count it sends the same bytes as before.
  double load_ms = 0;
  double density = 0;          // the density this iteration was compressed with
  std::vector<int> batch;              // per local GPU
  std::vector<double> gpu_compute_ms;  // forward + backward per local GPU
  double exchange_busy_ms = 0;     // union of the iteration's exchange intervals
  double exchange_shortest_ms = 0; // the quickest layer exchange (a latency sample)
  // Each layer exchange's [start, end) in ms from the iteration's first
  // start, flattened (start0, end0, start1, ...): layers leave backward one by
  // one, so the estimator must see which part of the busy time was only
  // latency (core/control/bandwidth_estimator.h).
  std::vector<double> exchange_intervals_ms;
  // The executor clock (ms) that exchange_intervals_ms start from, so the
  // controller can order one node's iterations in time. Reported only where
  // the estimator uses it (BandwidthEstimatorOptions::after_previous_iteration)
  // and sent only when >= 0, so other runs send the same bytes as before.
  double exchange_origin_ms = -1;
  uint64_t exchange_bytes = 0;     // exchange payload bytes received this iteration
  std::vector<uint64_t> window_sent;      // per peer, last window
  std::vector<uint64_t> window_received;  // per peer, last window
  double window_s = 0;                    // the span the window covers
};

class TelemetryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<uint8_t> encode(const NodeTelemetry& t);
// Throws TelemetryError naming the field (or the decoding failure).
NodeTelemetry decode_telemetry(const std::vector<uint8_t>& bytes);

}  // namespace st::telemetry
