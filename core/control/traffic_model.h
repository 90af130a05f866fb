#pragma once
// Bytes a StellaTrain iteration puts on each WAN direction at a density,
// and the density the controller picks (paper section 4: the smallest
// compression whose traffic fits the bandwidth within the compute time it
// overlaps with; here a bisection over the density, each density giving
// every layer its k = round(density x numel) as the engine does, or all of
// it for a layer sent whole).
//
// Wire bytes per layer follow core/compress/wire.h: a 16-byte header, then
// block ids (thresholdv16: one u32 per 16 values), u16 indices (layers of
// at most 65,536 elements) or u32 indices, then f32 or f16 values. In the
// sparse ring allgather every node receives the other W - 1 chunks, and
// W - 1 chunks cross each WAN direction of a ring over two clusters.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace st::control {

struct TrafficModel {
  std::vector<std::size_t> numels;  // per layer
  bool block_indices = true;        // thresholdv16's block16 encoding
  bool fp16_values = false;
  int nodes = 2;
  // Layers of at most this many elements are sent whole at every density
  // (StellaTrainOptions::dense_up_to), priced exactly as the wire encodes
  // them (compress::whole_chunk_size); 0: none.
  std::size_t dense_up_to = 0;

  // Payload bytes one node receives per iteration at `density`.
  double bytes_per_iteration(double density) const;
};

struct DensityChoice {
  double density = 0;
  double budget_ms = 0;     // the time the exchange may take
  double bytes = 0;         // per iteration at that density
  bool at_lower_bound = false;
  bool at_upper_bound = false;
};

// The largest density in [lower, upper] whose bytes_per_iteration x 8 /
// bandwidth fits in budget_ms (the lower bound when none does). Throws
// std::invalid_argument for bounds outside (0, 1] or lower > upper.
DensityChoice choose_density(const TrafficModel& model, double bandwidth_mbps, double budget_ms, double lower,
                             double upper);

}  // namespace st::control
