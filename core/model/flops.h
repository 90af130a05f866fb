#pragma once
// Forward floating-point operations per sample of the zoo's models, for the
// `analytic` compute-time model. Counted by hand from each architecture
// (core/model/*.cc): 2 x the multiply-accumulates of every convolution and
// matrix product; activations, pooling and normalisation are left out (a few
// percent). Backward is taken as 2 x forward (gradients for inputs and
// weights), the usual rule of thumb.
#include <string>

#include "core/model/model.h"

namespace st::model {

// Throws std::invalid_argument naming the model when it is not in the zoo.
double forward_flops_per_sample(const std::string& model, const ModelShape& shape);

}  // namespace st::model
