// The synchronous baselines (SyncSystem and DdpSystem are in
// sync_system.h). Both load the parameters, run forward and backward,
// reduce the gradients across nodes, then take one standard (dense) SGD
// step on every layer before the next iteration starts:
// * ddp: PyTorch DDP's algorithm, dense bucketed ring allreduce (25 MB
//   buckets in reverse layer order, 1 MB first bucket), each bucket started
//   during backward once backward has produced all of its layers;
// * topk-sync: the paper's "compressed" baseline, top-k with error feedback
//   per layer and a sparse allgather, no CPU offload, no pipelining.
// The dense step uses the sparse SGD with every index listed, which computes
// exactly torch::optim::SGD's update (docs/optim.md) on the master copy.
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/collective/sparse_allgather.h"
#include "core/compress/compressor.h"
#include "core/train/systems/sync/sync_options.h"
#include "core/train/systems/sync/sync_system.h"
#include "core/train/systems/sync/sync_systems.h"

namespace st::train {
namespace {

using runtime::Nanos;

class TopkSyncSystem final : public SyncSystem {
 public:
  explicit TopkSyncSystem(NodeContext& ctx) : SyncSystem(ctx) {
    compressor_ = compress::make_compressor("ef:topk", {simd::default_level(), ctx.config.seed});
    const auto names = ctx.workers.layer_names();
    chunks_.resize(numels_.size());
    for (std::size_t l = 0; l < numels_.size(); ++l) {
      ks_.push_back(compress::k_for_density(numels_[l], ctx.config.options_as<TopkSyncOptions>().density));
      states_.push_back(compressor_->make_state(numels_[l], ks_[l], names[l]));
      chunks_[l].reserve(compressor_->max_output(numels_[l], ks_[l]));
    }
  }
  std::string name() const override { return "topk-sync"; }

 protected:
  void reduce(int, std::vector<std::vector<float>>& grads, IterationRecord& record,
              std::function<void()> done) override {
    const std::size_t layers = grads.size();
    const Nanos start = ctx_.executor.now();
    // No CPU offload: top-k runs on the GPU (device 0), before any exchange.
    ctx_.executor.compute(
        [this, &grads, layers] {
          for (std::size_t l = 0; l < layers; ++l)
            chunks_[l].count = compressor_->compress(Span<const float>(grads[l]), ks_[l], *states_[l], chunks_[l].buffers());
        },
        runtime::ComputeCost{runtime::TaskKind::kCompressGpu, -1, static_cast<double>(total_numel()), ctx_.rank, 0},
        [this, &grads, &record, start, done] {
          record.compress_ms = detail::ms_since(ctx_.executor, start);
          exchange(grads, record, done);
        });
  }

 private:
  void exchange(std::vector<std::vector<float>>& grads, IterationRecord& record, const std::function<void()>& done) {
    const std::size_t layers = grads.size();
    auto remaining = std::make_shared<std::atomic<std::size_t>>(layers);
    for (std::size_t j = 0; j < layers; ++j) {
      const std::size_t l = layers - 1 - j;
      std::fill(grads[l].begin(), grads[l].end(), 0.0f);  // the dense sum accumulates here
      collective::SparseAllgatherOptions options;
      options.wire_numel = ctx_.workers.sampling().full_numels()[l];
      collective::sparse_ring_allgather_dense(
          ctx_.comm, chunks_[l].view(), numels_[l], grads[l].data(), options,
          [this, &record, remaining, done](std::exception_ptr error, const collective::CollectiveStats& stats) {
            if (error) std::rethrow_exception(error);
            {
              std::lock_guard<std::mutex> lock(mutex_);
              record.bytes_sent += stats.bytes_sent;
              record.bytes_received += stats.bytes_received;
            }
            if (remaining->fetch_sub(1) == 1) done();
          });
    }
  }

  std::unique_ptr<compress::Compressor> compressor_;
  std::vector<std::unique_ptr<compress::TensorState>> states_;
  std::vector<compress::SparseChunk> chunks_;
  std::vector<std::size_t> ks_;
  std::mutex mutex_;
};

}  // namespace

SystemDescriptor ddp_system() {
  auto d = describe_system<NoOptions, DdpSystem>(
      "ddp",
      "PyTorch DDP's algorithm: bucketed dense ring allreduce started during backward, then one SGD step");
  d.speedup_reference = true;
  d.samples_stages = true;
  return d;
}

SystemDescriptor topk_sync_system() {
  auto d = describe_system<TopkSyncOptions, TopkSyncSystem>(
      "topk-sync",
      "Synchronous top-k with error feedback and a sparse allgather (the paper's compressed baseline)");
  d.samples_stages = true;
  return d;
}

}  // namespace st::train
