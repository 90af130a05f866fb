// ddp-gloo in a build configured with -DST_WITH_DDP_GLOO=OFF (builds
// against a LibTorch other than the 1.13 its c10d code is written for,
// e.g. scripts/gpu/build.sh): the system is named, so say why it is absent.
#include <stdexcept>

#include "core/train/systems/ddp_gloo/gloo_training.h"

namespace st::train {

TrainResult run_gloo_training(const TrainConfig&, const data::Dataset&, const data::Dataset&, ResultsWriter&) {
  throw std::invalid_argument(
      "system ddp-gloo: not in this build (configured with -DST_WITH_DDP_GLOO=OFF, as scripts/gpu/build.sh does; "
      "it needs LibTorch 1.13's c10d Reducer)");
}

}  // namespace st::train
