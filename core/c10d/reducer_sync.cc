// GradientSync over PyTorch's own c10d::Reducer: the engine behind
// torch.nn.parallel.DistributedDataParallel, constructed and driven the way
// torch/nn/parallel/distributed.py (1.13) does it, minus Python.
#include <torch/csrc/distributed/c10d/reducer.hpp>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "core/c10d/gloo_group_state.h"
#include "core/c10d/gradient_sync.h"

namespace st::c10d_ddp {
namespace {

class ReducerSync final : public GradientSync {
 public:
  ReducerSync(const GlooGroupState& group, const std::vector<at::Tensor>& parameters, const GlooDdpOptions& options)
      : group_(group), parameters_(parameters) {
    // DDP's initial assignment: buckets cut in registration order (first one
    // capped at first_bucket_cap_bytes), then reversed so that the bucket
    // holding the last layers, whose gradients come first, is reduced first.
    // After the first backward the Reducer rebuilds them in the order the
    // gradients actually became ready (rebuild_buckets in before_forward).
    const std::vector<size_t> size_caps{static_cast<size_t>(options.first_bucket_cap_bytes),
                                        static_cast<size_t>(options.bucket_cap_bytes)};
    auto [bucket_indices, per_bucket_limits] =
        ::c10d::compute_bucket_assignment_by_size(parameters, size_caps, std::vector<bool>(parameters.size(), false));
    std::reverse(bucket_indices.begin(), bucket_indices.end());
    std::reverse(per_bucket_limits.begin(), per_bucket_limits.end());
    reducer_ = std::make_unique<::c10d::Reducer>(
        parameters, std::move(bucket_indices), std::move(per_bucket_limits), group.process_group,
        std::vector<bool>(parameters.size(), false), options.bucket_cap_bytes,
        /*find_unused_parameters=*/false, /*gradient_as_bucket_view=*/false, std::unordered_map<size_t, std::string>{},
        options.first_bucket_cap_bytes);
    // DDP.register_comm_hook's C++ path: the FP16 hook's code lives inside
    // libtorch_cpu (only register_builtin_comm_hook is exported), as in
    // Python's DDP._register_builtin_comm_hook.
    if (options.comm_hook == CommHook::kFp16Compress)
      reducer_->register_builtin_comm_hook(::c10d::BuiltinCommHookType::FP16_COMPRESS);
  }

  GradientEngine engine() const override { return GradientEngine::kReducer; }

  void before_forward() override {
    try {
      reducer_->prepare_for_forward();
      // No-op except after the first step, when it broadcasts rank 0's
      // gradient-ready bucket order and re-initializes the buckets.
      reducer_->rebuild_buckets();
    } catch (const std::exception& error) {
      throw std::runtime_error(collective_failure(group_, "Reducer bucket rebuild", error));
    }
  }

  void before_backward(int worker) override {
    if (worker != 0) throw std::logic_error("ReducerSync serves a single local worker");
    // Empty outputs: with find_unused_parameters=false the Reducer does not
    // search the graph (DDP passes [] too).
    reducer_->prepare_for_backward({});
  }

  // The Reducer's autograd hooks launched every bucket's allreduce during
  // backward and its end-of-backward callback waited for them and copied the
  // averaged buckets into .grad, so nothing is left to do here.
  void after_backward() override {}

  std::vector<std::vector<std::size_t>> bucket_layout() const override {
    std::unordered_map<const void*, std::size_t> index_of;
    for (std::size_t i = 0; i < parameters_.size(); ++i) index_of[parameters_[i].unsafeGetTensorImpl()] = i;
    std::vector<std::vector<std::size_t>> layout;
    for (const ::c10d::GradBucket& bucket : reducer_->get_grad_buckets(/*return_zero_tensors=*/false)) {
      std::vector<std::size_t>& indices = layout.emplace_back();
      for (const at::Tensor& parameter : bucket.getParameters())
        indices.push_back(index_of.at(parameter.unsafeGetTensorImpl()));
    }
    return layout;
  }

 private:
  const GlooGroupState& group_;
  std::vector<at::Tensor> parameters_;
  std::unique_ptr<::c10d::Reducer> reducer_;
};

}  // namespace

std::unique_ptr<GradientSync> make_reducer_sync(const GlooGroupState& group, const std::vector<at::Tensor>& parameters,
                                                const GlooDdpOptions& options) {
  return std::make_unique<ReducerSync>(group, parameters, options);
}

}  // namespace st::c10d_ddp
