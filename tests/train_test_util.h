#pragma once
// Helpers shared by the training tests.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/train/config.h"

namespace st::train {

// Two nodes of two workers training the MLP on synthetic data for 10
// iterations, quietly, evaluating only at the end.
inline TrainConfig small_config(const std::string& system) {
  TrainConfig c;
  c.system = system;
  c.model = "mlp";
  c.dataset = "synthetic";
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.batch_per_worker = 32;
  c.iterations = 10;
  c.lr = 0.05;
  c.momentum = 0.9;
  c.weight_decay = 1e-4;
  c.density = 0.05;
  c.eval_interval = 0;
  c.eval_samples = 500;
  c.quiet = true;
  return c;
}

// The largest elementwise difference between two parameter sets, over the
// largest magnitude in `b`: 0 iff equal as values (signed zeros aside).
inline double max_relative_difference(const std::vector<std::vector<float>>& a,
                                      const std::vector<std::vector<float>>& b) {
  double worst = 0, scale = 0;
  for (std::size_t l = 0; l < a.size(); ++l)
    for (std::size_t i = 0; i < a[l].size(); ++i) {
      worst = std::max(worst, std::fabs(static_cast<double>(a[l][i]) - b[l][i]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[l][i])));
    }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace st::train
