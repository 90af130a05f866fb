#pragma once
// A controller decision (docs/control.md): from iteration
// `effective_iteration` on, every node compresses with `density` and local
// GPU g of node n runs batch[n][g]. With `drain_iterations` > 0, the first
// that many iterations run at `drain_density` instead (a drain of the WAN
// queue, so that latency probes see the path's floor; controller.h).
// Rank 0 sends it to every node (tag telemetry::kPlanTag) far enough ahead
// that no node has begun that iteration, so every node switches at the
// same iteration and simulated runs stay deterministic. With
// `density_from` > 0 the density (and drain) may start sooner: each node
// takes it from the first iteration at or after `density_from` that it has
// not begun when the plan arrives. Only the batches must switch together
// (they weigh each node's gradient); a sparse exchange carries each
// chunk's own count, so nodes at two densities still sum exactly.
// MessagePack on the wire; decode() checks every field.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace st::control {

struct Plan {
  int effective_iteration = 0;
  double density = 0;
  std::vector<std::vector<int>> batch;  // [node][local GPU]
  std::string reason;                   // why, for control.csv and the log
  int drain_iterations = 0;             // 0: no drain
  double drain_density = 0;             // with a drain
  int density_from = 0;                 // 0: the density switches with the batches
};

class PlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::vector<uint8_t> encode(const Plan& plan);
// Throws PlanError naming the field.
Plan decode_plan(const std::vector<uint8_t>& bytes);

}  // namespace st::control
