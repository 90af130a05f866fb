#pragma once
// Per-GPU throughput and the batch split across GPUs (paper section 4).
//
// Each GPU's throughput in samples/s is modelled as min(beta / alpha x b,
// beta): linear in the batch b up to a saturation point alpha, flat after
// it. The model is fitted online from the (batch, compute time) points the
// GPU reports; no offline profile is needed. With one batch size seen so
// far alpha is 0 (time proportional to batch); a second batch size shows
// where throughput saturates.
//
// allocate_batches() splits a global batch so that every GPU's predicted
// compute time is (nearly) the same: the smallest time T at which the GPUs
// together can process the global batch, each GPU taking what it can finish
// within T, the rounding excess taken back from the GPUs with most slack.
#include <map>
#include <vector>

namespace st::control {

class GpuThroughputModel {
 public:
  void add(int batch, double compute_ms);  // ignored unless batch >= 1 and compute_ms > 0
  bool empty() const { return points_.empty(); }
  double alpha() const { return alpha_; }        // saturation batch
  double beta() const { return beta_; }          // samples per second when saturated
  double predicted_ms(int batch) const;          // max(batch, alpha) / beta

 private:
  void fit();
  struct Mean {
    double sum_ms = 0;
    int count = 0;
  };
  std::map<int, Mean> points_;  // batch -> mean compute time
  double alpha_ = 0, beta_ = 0;
};

// Throws std::invalid_argument when a model is empty, the global batch is
// smaller than gpus x min_batch, or max_batch (per GPU, empty: no limit)
// cannot hold it.
std::vector<int> allocate_batches(const std::vector<GpuThroughputModel>& gpus, int global_batch, int min_batch = 1,
                                  const std::vector<int>& max_batch = {});

}  // namespace st::control
