#include "core/model/gradient_hooks.h"

#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "core/model/model.h"

namespace st::model {

struct GradientReadyHooks::Impl {
  // Variables hold their accumulator only weakly; like the Reducer, keep
  // them alive so the hooks survive between backward passes.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;
  std::vector<std::uintptr_t> keys;
  std::function<void(std::size_t)> on_ready;
};

GradientReadyHooks::GradientReadyHooks(const Model& model, std::function<void(std::size_t)> on_ready)
    : impl_(new Impl{{}, {}, std::move(on_ready)}) {
  const auto params = model.parameters();
  for (std::size_t p = 0; p < params.size(); ++p) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params[p]);
    Impl* impl = impl_.get();
    auto hook = std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [impl, p](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          impl->on_ready(p);
          return outputs;
        });
    impl_->keys.push_back(accumulator->add_post_hook(std::move(hook)));
    impl_->accumulators.push_back(std::move(accumulator));
  }
}

GradientReadyHooks::~GradientReadyHooks() {
  for (std::size_t p = 0; p < impl_->accumulators.size(); ++p) impl_->accumulators[p]->del_post_hook(impl_->keys[p]);
}

}  // namespace st::model
