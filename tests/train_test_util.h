#pragma once
// Helpers shared by the training tests.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/train/config.h"
#include "core/train/run/real_backend.h"
#include "core/train/systems/local_step/local_step_options.h"
#include "core/train/systems/stellatrain/stellatrain_options.h"
#include "core/train/systems/sync/sync_options.h"

namespace st::train {

// Two nodes of two workers training the MLP on synthetic data for 10
// iterations, quietly, evaluating only at the end.
inline TrainConfig small_config(const std::string& system) {
  TrainConfig c;
  c.use_system(system);
  c.model = "mlp";
  c.dataset = "synthetic";
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.batch_per_worker = 32;
  c.iterations = 10;
  c.lr = 0.05;
  c.momentum = 0.9;
  c.weight_decay = 1e-4;
  c.eval_interval = 0;
  c.eval_samples = 500;
  c.quiet = true;
  return c;
}

// The headline's shape: the CNN on Fashion-MNIST, 2 nodes of 2 workers at
// batch 64, 10 iterations, quietly, evaluating only at the end.
inline TrainConfig cnn_config(const std::string& system) {
  TrainConfig c = small_config(system);
  c.model = "cnn";
  c.dataset = "fashion-mnist";
  c.batch_per_worker = 64;
  c.weight_decay = 0;
  c.eval_samples = 2000;
  return c;
}

// A run on the real backend (threads and the wall clock).
inline TrainResult train_real(const TrainConfig& c) { return RealBackend().train(c); }

// Sets a system option by its scenario key, as a scenario would (through
// the system's option table); false when the run's system has no such key.
inline bool set_option(TrainConfig& c, const std::string& key, const std::string& value) {
  const OptionField* field = c.options->field(key);
  if (field == nullptr) return false;
  field->read_text(*c.options, value);
  return true;
}

inline StellaTrainOptions& stellatrain_options(TrainConfig& c) { return c.options_as<StellaTrainOptions>(); }

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

// ||a - b|| / ||b|| over all layers: how far two parameter sets are apart
// as a whole. Unlike the largest elementwise difference above, one weight
// whose fp16 rounding flips under another kernel's last bits barely moves
// it, so it separates two arithmetics that differ everywhere.
inline double norm_relative_difference(const std::vector<std::vector<float>>& a,
                                       const std::vector<std::vector<float>>& b) {
  double difference = 0, norm = 0;
  for (std::size_t l = 0; l < a.size(); ++l)
    for (std::size_t i = 0; i < a[l].size(); ++i) {
      const double d = static_cast<double>(a[l][i]) - b[l][i];
      difference += d * d;
      norm += static_cast<double>(b[l][i]) * b[l][i];
    }
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

}  // namespace st::train
