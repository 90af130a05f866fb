#pragma once
// PowerSGD (Vogels, Karimireddy, Jaggi, NeurIPS 2019) on one node, as
// PyTorch's powerSGD_hook computes it, without the communication: the
// ddp-powersgd system (ddp_hook_systems.cc) runs the three phases around
// its allreduces, and the tests drive them directly.
//
// A layer whose tensor has more than one dimension is viewed as a row-major
// matrix M (rows = shape[0], cols = the rest). With r' = min(rows, cols, r)
// it is compressed when (rows + cols) r' x min_compression_rate < rows x
// cols (PyTorch's _should_compress); vectors never pass that test. Other
// layers go through a flat "uncompressed" buffer, allreduced as they are.
//
// One iteration, per compressed layer, in PyTorch's order:
//   compute_p:  M = grad + error (error feedback); Q = the previous Q (warm
//               start) or a draw from a seeded normal, orthogonalized;
//               P = M Q                                    -> allreduce P
//   compute_q:  P orthogonalized (Gram-Schmidt); Q = M^T P -> allreduce Q
//   decompress: grad = P Q^T, the approximation of the sum over the nodes;
//               error = M - grad x share, where share is this node's part
//               of the sum: its workers over all workers (1 / nodes when
//               every node has as many)
// The buffers stay sums (the SyncSystem contract: the step divides by the
// number of workers); PyTorch divides Q by the world size instead, which
// is the same up to rounding. Q is only ever used after orthogonalization,
// so keeping the sum of Q for the warm start changes nothing either.
// Torch-free header (Eigen does the matrix products in powersgd.cc).
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace st::train {

struct PowerSgdOptions {
  int rank = 4;                 // r: columns of P and Q
  bool error_feedback = true;   // carry M - approximation into the next iteration
  bool warm_start = true;       // start from the last Q instead of a fresh draw
  double min_compression_rate = 2;  // PyTorch's default; 0 compresses every matrix
  uint64_t seed = 0;            // of the normal draws for Q, equal on every node
};

class PowerSgd {
 public:
  // `shapes`: each layer's tensor shape, in layer order.
  PowerSgd(const std::vector<std::vector<int64_t>>& shapes, PowerSgdOptions options);

  bool compressed(std::size_t layer) const { return layers_[layer].compressed; }
  std::size_t rows(std::size_t layer) const { return layers_[layer].rows; }
  std::size_t cols(std::size_t layer) const { return layers_[layer].cols; }
  std::size_t layer_rank(std::size_t layer) const { return layers_[layer].rank; }

  // The flat buffers the system allreduces: every compressed layer's P
  // (rows x r', row-major) and Q (cols x r'), and the uncompressed layers,
  // each in layer order.
  std::vector<float>& p() { return p_; }
  std::vector<float>& q() { return q_; }
  std::vector<float>& uncompressed() { return uncompressed_; }
  // This node's error of a compressed layer (rows x cols, row-major).
  const std::vector<float>& error(std::size_t layer) const { return layers_[layer].error; }

  // The three phases; `grads` holds one buffer per layer (this node's
  // gradient in, the approximation of the sum over the nodes out).
  void compute_p(std::vector<std::vector<float>>& grads);
  void compute_q(const std::vector<std::vector<float>>& grads);
  // `local_workers` of `all_workers` are this node's.
  void decompress(std::vector<std::vector<float>>& grads, int local_workers, int all_workers);

  // Bytes each phase reads and writes in device memory, for the
  // simulator's price (see ddp_hook_systems.cc).
  double compute_p_bytes() const;
  double compute_q_bytes() const;
  double decompress_bytes() const;

  // Gram-Schmidt on the columns of a row-major rows x cols matrix, in place,
  // as PyTorch's _orthogonalize_gram_schmidt (epsilon 0). A column that is
  // all zeros after projection stays zeros (PyTorch's would turn to NaN).
  static void orthogonalize(float* matrix, std::size_t rows, std::size_t cols);

 private:
  struct Layer {
    bool compressed = false;
    std::size_t rows = 0, cols = 0, rank = 0;
    std::size_t p_offset = 0, q_offset = 0, uncompressed_offset = 0;
    std::vector<float> error;  // compressed layers with error feedback
  };

  std::vector<Layer> layers_;
  PowerSgdOptions options_;
  std::vector<float> p_, q_, uncompressed_;
  std::size_t compressed_elements_ = 0;
  bool have_q_ = false;  // a Q from a previous iteration (warm start)
  std::mt19937_64 random_;
};

}  // namespace st::train
