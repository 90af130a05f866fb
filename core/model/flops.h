#pragma once
// Forward floating-point operations per sample of the zoo's models, for the
// `analytic` compute-time model. Counted by hand from each architecture
// (core/model/*.cc, hyperparameters from architectures.h): 2 x the
// multiply-accumulates of every convolution and matrix product (attention's
// score and weighted-sum products included); activations, pooling,
// normalisation and bias additions are left out (a few percent). Backward is
// taken as 2 x forward (gradients for inputs and weights), the usual rule of
// thumb.
#include <string>
#include <vector>

#include "core/model/model.h"

namespace st::model {

// The forward FLOPs per sample of the operation one parameter tensor belongs
// to: a convolution or linear weight carries that product's FLOPs; biases,
// norm scales and shifts, class tokens and position embeddings carry 0 (their
// work is elementwise, outside the count); attention's score and
// weighted-sum products, which own no parameter, are charged to the block's
// qkv weight.
struct ParameterFlops {
  std::string name;  // as in Model::named_parameters(), e.g. "layer1.0.conv1.weight"
  double forward_flops;
};

// One entry per parameter tensor, in the order of Model::named_parameters()
// (registration order), so a simulator can time each layer's gradient inside
// backward. The entries sum to forward_flops_per_sample(model, shape).
// Throws std::invalid_argument naming the model when it is not in the zoo or
// cannot take `shape` (the same rules as make_model).
std::vector<ParameterFlops> parameter_forward_flops(const std::string& model, const ModelShape& shape);

// The sum of parameter_forward_flops; same exceptions.
double forward_flops_per_sample(const std::string& model, const ModelShape& shape);

// Either kind of model: a TorchScript file's are measured or declared
// (torchscript_parameter_flops, core/model/torchscript_model.h).
std::vector<ParameterFlops> parameter_forward_flops(const ModelSpec& spec, const ModelShape& shape);
double forward_flops_per_sample(const ModelSpec& spec, const ModelShape& shape);

}  // namespace st::model
