#include "core/train/systems/sync/powersgd.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace st::train {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixMap = Eigen::Map<RowMajor>;
using ConstMatrixMap = Eigen::Map<const RowMajor>;

}  // namespace

PowerSgd::PowerSgd(const std::vector<std::vector<int64_t>>& shapes, PowerSgdOptions options)
    : options_(options), random_(options.seed) {
  if (options.rank < 1) throw std::invalid_argument(fmt::format("powersgd: rank must be at least 1, got {}", options.rank));
  std::size_t p_size = 0, q_size = 0, uncompressed_size = 0;
  for (const auto& shape : shapes) {
    Layer layer;
    std::size_t numel = 1;
    for (int64_t d : shape) numel *= static_cast<std::size_t>(d);
    layer.rows = shape.empty() ? 1 : static_cast<std::size_t>(shape[0]);
    layer.cols = layer.rows == 0 ? 0 : numel / layer.rows;
    layer.rank = std::min({layer.rows, layer.cols, static_cast<std::size_t>(options.rank)});
    // PyTorch's _should_compress; a vector (cols = 1) never passes it at the
    // default rate, and a matrix of which a rank-r' pair is not smaller
    // stays dense.
    layer.compressed = shape.size() > 1 && layer.rank > 0 &&
                       static_cast<double>((layer.rows + layer.cols) * layer.rank) * options.min_compression_rate <
                           static_cast<double>(layer.rows * layer.cols);
    if (layer.compressed) {
      layer.p_offset = p_size;
      layer.q_offset = q_size;
      p_size += layer.rows * layer.rank;
      q_size += layer.cols * layer.rank;
      compressed_elements_ += numel;
      if (options.error_feedback) layer.error.assign(numel, 0.0f);
    } else {
      layer.uncompressed_offset = uncompressed_size;
      uncompressed_size += numel;
    }
    layers_.push_back(std::move(layer));
  }
  p_.assign(p_size, 0.0f);
  q_.assign(q_size, 0.0f);
  uncompressed_.assign(uncompressed_size, 0.0f);
}

void PowerSgd::orthogonalize(float* matrix, std::size_t rows, std::size_t cols) {
  MatrixMap m(matrix, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  for (Eigen::Index i = 0; i < m.cols(); ++i) {
    const float norm = m.col(i).norm();
    if (norm > 0) {
      m.col(i) /= norm;
    } else {
      m.col(i).setZero();
    }
    // Modified Gram-Schmidt: project the normalized column out of the rest.
    for (Eigen::Index j = i + 1; j < m.cols(); ++j) m.col(j) -= m.col(i).dot(m.col(j)) * m.col(i);
  }
}

void PowerSgd::compute_p(std::vector<std::vector<float>>& grads) {
  if (grads.size() != layers_.size())
    throw std::invalid_argument(fmt::format("powersgd: {} gradients for {} layers", grads.size(), layers_.size()));
  // A fresh Q on the first compressed iteration, and on every one without
  // warm start; drawn in layer order from one generator, so every node
  // draws the same (PyTorch seeds one draw per bucket and iteration the
  // same way on every replica).
  const bool draw = !options_.warm_start || !have_q_;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    auto& layer = layers_[l];
    auto& g = grads[l];
    if (!layer.compressed) {
      if (!g.empty()) std::memcpy(uncompressed_.data() + layer.uncompressed_offset, g.data(), g.size() * sizeof(float));
      continue;
    }
    if (g.size() != layer.rows * layer.cols)
      throw std::invalid_argument(fmt::format("powersgd: layer {} has {} gradient elements, expected {} x {}", l,
                                              g.size(), layer.rows, layer.cols));
    if (options_.error_feedback)
      for (std::size_t i = 0; i < g.size(); ++i) g[i] += layer.error[i];
    float* q = q_.data() + layer.q_offset;
    if (draw)
      for (std::size_t i = 0; i < layer.cols * layer.rank; ++i) q[i] = normal(random_);
    orthogonalize(q, layer.cols, layer.rank);
    const ConstMatrixMap m(g.data(), static_cast<Eigen::Index>(layer.rows), static_cast<Eigen::Index>(layer.cols));
    const ConstMatrixMap q_matrix(q, static_cast<Eigen::Index>(layer.cols), static_cast<Eigen::Index>(layer.rank));
    MatrixMap p(p_.data() + layer.p_offset, static_cast<Eigen::Index>(layer.rows), static_cast<Eigen::Index>(layer.rank));
    p.noalias() = m * q_matrix;
  }
  have_q_ = true;
}

void PowerSgd::compute_q(const std::vector<std::vector<float>>& grads) {
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const auto& layer = layers_[l];
    if (!layer.compressed) continue;
    float* p = p_.data() + layer.p_offset;
    orthogonalize(p, layer.rows, layer.rank);
    const ConstMatrixMap m(grads[l].data(), static_cast<Eigen::Index>(layer.rows), static_cast<Eigen::Index>(layer.cols));
    const ConstMatrixMap p_matrix(p, static_cast<Eigen::Index>(layer.rows), static_cast<Eigen::Index>(layer.rank));
    MatrixMap q(q_.data() + layer.q_offset, static_cast<Eigen::Index>(layer.cols), static_cast<Eigen::Index>(layer.rank));
    q.noalias() = m.transpose() * p_matrix;
  }
}

void PowerSgd::decompress(std::vector<std::vector<float>>& grads, int local_workers, int all_workers) {
  // G / (N G) is 1 / N exactly, and IEEE division rounds it as 1.0f / N.
  const float share = static_cast<float>(local_workers) / static_cast<float>(all_workers);
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    auto& layer = layers_[l];
    auto& g = grads[l];
    if (!layer.compressed) {
      if (!g.empty()) std::memcpy(g.data(), uncompressed_.data() + layer.uncompressed_offset, g.size() * sizeof(float));
      continue;
    }
    const ConstMatrixMap p(p_.data() + layer.p_offset, static_cast<Eigen::Index>(layer.rows),
                           static_cast<Eigen::Index>(layer.rank));
    const ConstMatrixMap q(q_.data() + layer.q_offset, static_cast<Eigen::Index>(layer.cols),
                           static_cast<Eigen::Index>(layer.rank));
    MatrixMap m(g.data(), static_cast<Eigen::Index>(layer.rows), static_cast<Eigen::Index>(layer.cols));
    if (!options_.error_feedback) {
      m.noalias() = p * q.transpose();
      continue;
    }
    // error = M - (the mean's approximation): this node's part of what the
    // approximation left out, carried into the next iteration.
    RowMajor approximation = p * q.transpose();
    MatrixMap error(layer.error.data(), m.rows(), m.cols());
    error = m - approximation * share;
    m = approximation;
  }
}

double PowerSgd::compute_p_bytes() const {
  // M = g + e: read both, write M; P = M Q: read M (Q and P are r columns,
  // small next to M). Uncompressed layers: one copy.
  const double per_element = options_.error_feedback ? 16 : 4;
  return per_element * static_cast<double>(compressed_elements_) + 8.0 * static_cast<double>(uncompressed_.size());
}

double PowerSgd::compute_q_bytes() const { return 4.0 * static_cast<double>(compressed_elements_); }

double PowerSgd::decompress_bytes() const {
  // P Q^T written over M; with error feedback M is read first and the error
  // written. Uncompressed layers: one copy back.
  const double per_element = options_.error_feedback ? 12 : 4;
  return per_element * static_cast<double>(compressed_elements_) + 8.0 * static_cast<double>(uncompressed_.size());
}

}  // namespace st::train
