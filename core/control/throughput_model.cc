#include "core/control/throughput_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace st::control {

void GpuThroughputModel::add(int batch, double compute_ms) {
  if (batch < 1 || !(compute_ms > 0) || !std::isfinite(compute_ms)) return;
  auto& m = points_[batch];
  m.sum_ms += compute_ms;
  ++m.count;
  fit();
}

// Least squares over the mean point of every batch size seen: for a fixed
// alpha the model x(b) = beta x min(b / alpha, 1) is linear in beta, so each
// candidate alpha (0 and every batch seen) gets its best beta in closed form
// and the pair with the smallest squared error wins.
void GpuThroughputModel::fit() {
  double best_error = std::numeric_limits<double>::infinity();
  std::vector<double> candidates{0};
  for (const auto& [b, m] : points_) candidates.push_back(b);
  for (double alpha : candidates) {
    double xf = 0, ff = 0;
    for (const auto& [b, m] : points_) {
      const double x = b / (m.sum_ms / m.count / 1e3);
      const double f = alpha > 0 ? std::min(b / alpha, 1.0) : 1.0;
      xf += x * f;
      ff += f * f;
    }
    const double beta = xf / ff;
    double error = 0;
    for (const auto& [b, m] : points_) {
      const double x = b / (m.sum_ms / m.count / 1e3);
      const double f = alpha > 0 ? std::min(b / alpha, 1.0) : 1.0;
      error += (x - beta * f) * (x - beta * f);
    }
    if (error < best_error * (1 - 1e-12)) best_error = error, alpha_ = alpha, beta_ = beta;
  }
}

double GpuThroughputModel::predicted_ms(int batch) const {
  if (beta_ <= 0) return 0;
  return std::max(static_cast<double>(batch), alpha_) / beta_ * 1e3;
}

std::vector<int> allocate_batches(const std::vector<GpuThroughputModel>& gpus, int global_batch, int min_batch,
                                  const std::vector<int>& max_batch) {
  const int n = static_cast<int>(gpus.size());
  if (n == 0) throw std::invalid_argument("allocate_batches: no GPUs");
  for (int g = 0; g < n; ++g)
    if (gpus[g].empty() || gpus[g].beta() <= 0)
      throw std::invalid_argument(fmt::format("allocate_batches: GPU {} has no throughput measurements", g));
  if (min_batch < 1 || global_batch < n * min_batch)
    throw std::invalid_argument(fmt::format("allocate_batches: global batch {} is below {} GPUs x {}", global_batch, n,
                                            min_batch));
  auto limit = [&](int g) { return max_batch.empty() ? global_batch : max_batch[g]; };
  if (!max_batch.empty() && std::accumulate(max_batch.begin(), max_batch.end(), 0LL) < global_batch)
    throw std::invalid_argument(fmt::format("allocate_batches: the GPUs' max batches cannot hold {}", global_batch));
  // What GPU g finishes within T ms (at least min_batch: every GPU works).
  auto capacity = [&](int g, double t_ms) {
    const double fits = std::floor(t_ms / 1e3 * gpus[g].beta());
    const int can = fits >= gpus[g].alpha() ? static_cast<int>(std::min<double>(fits, limit(g))) : min_batch;
    return std::max(min_batch, std::min(can, limit(g)));
  };
  auto total = [&](double t_ms) {
    long long sum = 0;
    for (int g = 0; g < n; ++g) sum += capacity(g, t_ms);
    return sum;
  };
  double lo = 0, hi = 1;
  while (total(hi) < global_batch) hi *= 2;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (total(mid) >= global_batch ? hi : lo) = mid;
  }
  std::vector<int> batch(static_cast<std::size_t>(n));
  for (int g = 0; g < n; ++g) batch[g] = capacity(g, hi);
  long long excess = std::accumulate(batch.begin(), batch.end(), 0LL) - global_batch;
  while (excess > 0) {  // take one sample at a time from the GPU predicted slowest
    int slowest = -1;
    for (int g = 0; g < n; ++g)
      if (batch[g] > min_batch && (slowest < 0 || gpus[g].predicted_ms(batch[g]) > gpus[slowest].predicted_ms(batch[slowest])))
        slowest = g;
    --batch[slowest];
    --excess;
  }
  return batch;
}

}  // namespace st::control
