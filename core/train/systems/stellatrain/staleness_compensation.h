#pragma once
// How StellaTrain compensates a stale forward (staleness 1: the forward of
// iteration t runs on parameters that miss iteration t-1's update;
// docs/convergence.md). One strategy object per run, chosen by the
// `compensation` option:
// * none: the forward uses what the master holds;
// * predict: readers see the parameters extrapolated over the updates they
//   miss, from the momentum buffer;
// * lookahead: predict, plus this node's own compressed gradient of the
//   missing iteration in place of everyone's (the forward waits for it);
// * dc: delay-compensated gradients (DC-ASGD, Zheng et al., ICML 2017).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/compress/sparse.h"
#include "core/util/span.h"

namespace st::optim {
class SparseOptimizer;
class ParamState;
}  // namespace st::optim

namespace st::train {

struct TrainConfig;
struct StellaTrainOptions;

class StalenessCompensation {
 public:
  virtual ~StalenessCompensation() = default;

  // Readers of the master see optimizer extrapolation beyond the stored
  // values (predict, lookahead).
  virtual bool shapes_view() const { return false; }
  // Of the `missing` updates a reader of version `target` has not seen yet,
  // how many the view extrapolates over.
  virtual uint32_t steps_ahead(int missing) const {
    (void)missing;
    return 0;
  }
  // After extrapolation, on the view of `layer` for version `target`.
  virtual void adjust_view(std::size_t layer, int target, int missing, float* out) {
    (void)layer, (void)target, (void)missing, (void)out;
  }
  // The forward of iteration t waits until this node has compressed every
  // layer of t - 1 (lookahead reads those chunks).
  virtual bool forward_waits_for_own_compression() const { return false; }
  // The forward's parameter values are kept per layer (delay compensation
  // reads them), in timing mode too.
  virtual bool keeps_forward_values() const { return false; }
  // Corrects the exchanged (mean) sparse gradient of iteration t before the
  // step, under the layer's lock; `stored` is the master's layer.
  virtual void correct(int t, std::size_t layer, Span<const float> stored, const optim::ParamState& state,
                       compress::SparseChunk& sum) {
    (void)t, (void)layer, (void)stored, (void)state, (void)sum;
  }
};

// What the strategies read from the system they serve.
struct CompensationInputs {
  const TrainConfig& config;
  const StellaTrainOptions& options;
  const optim::SparseOptimizer& optimizer;
  std::size_t layers = 0;
  int local_workers = 1;  // this node's GPUs
  // This node's compressed chunk of iteration t for a layer (lookahead).
  std::function<const compress::SparseChunk&(int t, std::size_t layer)> own_chunk;
  // The values the forward of iteration t used for a layer (dc).
  std::function<const std::vector<float>&(int t, std::size_t layer)> forward_values;
};

// Throws std::invalid_argument for an unknown compensation.
std::unique_ptr<StalenessCompensation> make_staleness_compensation(const CompensationInputs& inputs);

}  // namespace st::train
