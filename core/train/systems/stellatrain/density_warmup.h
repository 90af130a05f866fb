#pragma once
// Density warm-up (Deep Gradient Compression's "sparsity warm-up"): the
// first iterations send more of the gradient than the density the system
// would otherwise use, and the density falls geometrically to it. Early
// gradients change fastest and error feedback has the least history then,
// so a low density costs the most iterations at the start
// (docs/convergence.md, "Density warm-up"). DGC lowers the density 4x per
// epoch from 25%; here the fall is smooth per iteration, since the regime's
// runs last a few hundred iterations, not epochs.
namespace st::train {

struct DensityWarmup {
  int iterations = 0;   // 0: off
  double start = 0.25;  // iteration 0's density

  bool on() const { return iterations > 0; }
  // Iteration t's density, given `base`, the density the system uses
  // without the warm-up (fixed, or the controller's): start x (base /
  // start)^(t / iterations) while t < iterations, never below base.
  double density_at(int t, double base) const;
};

}  // namespace st::train
