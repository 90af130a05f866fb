#include "core/train/run/sampled_cost_executor.h"

#include <fmt/format.h>

#include <stdexcept>

namespace st::train {
namespace {

// Kinds whose work counts layer elements (or bytes, or indices, which a
// sample has that share of); the rest count samples.
bool scales_with_layer(runtime::TaskKind kind) {
  switch (kind) {
    case runtime::TaskKind::kForward:
    case runtime::TaskKind::kBackward:
    case runtime::TaskKind::kEvaluate:
      return false;
    default:
      return true;
  }
}

}  // namespace

runtime::ComputeCost SampledCostExecutor::full_size(runtime::ComputeCost cost) const {
  if (!scales_with_layer(cost.kind)) return cost;
  if (cost.layer < 0) {
    cost.work *= sampling_.total_scale();
    return cost;
  }
  if (static_cast<std::size_t>(cost.layer) >= sampling_.layers())
    throw std::logic_error(fmt::format("sampled stages: a {} task names layer {} of {}", runtime::to_string(cost.kind),
                                       cost.layer, sampling_.layers()));
  cost.work *= sampling_.scale(static_cast<std::size_t>(cost.layer));
  return cost;
}

}  // namespace st::train
