#include "core/optim/dense_sgd.h"

#include <limits>
#include <stdexcept>

#include "core/optim/kernels.h"
#include "core/optim/step_common.h"

namespace st::optim {
namespace {

constexpr const char* kName = "dense_sgd";

}  // namespace

DenseSgd::DenseSgd(const SgdOptions& options, const ExecutionOptions& exec) : options_(options), exec_(exec) {
  detail::check_sgd_options(kName, options);
  detail::check_execution_options(exec);
}

std::unique_ptr<DenseSgdState> DenseSgd::make_state(std::size_t numel, const std::string& tensor_name) const {
  auto state = std::make_unique<DenseSgdState>();
  state->name = tensor_name;
  state->numel = numel;
  // torch tests `momentum != 0` in double precision; so do we.
  if (options_.momentum != 0.0) state->momentum_buffer.assign(numel, 0.0f);
  return state;
}

void DenseSgd::step(Span<float> param, Span<const float> grad, DenseSgdState& state) const {
  const bool momentum = options_.momentum != 0.0;
  // Messages are built only on failure: a valid step must not allocate.
  const auto fail = [&](const std::string& detail) {
    throw std::invalid_argument(std::string(kName) + ": tensor '" + state.name + "': " + detail);
  };
  if (param.size() != state.numel || grad.size() != state.numel) {
    fail("parameter has " + std::to_string(param.size()) + " entries and gradient " + std::to_string(grad.size()) +
         " but the state was made for " + std::to_string(state.numel));
  }
  if (state.momentum_buffer.size() != (momentum ? state.numel : 0)) {
    fail("state does not match this optimizer's momentum setting");
  }
  if (state.step == std::numeric_limits<uint32_t>::max()) fail("step counter would overflow");
  ++state.step;

  // Scalars rounded to float exactly as SparseSgd rounds them.
  detail::DenseSgdKernelArgs args;
  args.param = param.data();
  args.momentum_buffer = momentum ? state.momentum_buffer.data() : nullptr;
  args.grad = grad.data();
  args.count = param.size();
  args.first_step = state.step == 1;
  args.neg_lr = static_cast<float>(-1 * (options_.lr * state.lr_scale));
  args.weight_decay = static_cast<float>(options_.weight_decay);
  args.momentum = static_cast<float>(options_.momentum);
  args.damped_scale = static_cast<float>(1 - options_.dampening);
  args.nesterov = options_.nesterov;
  const auto kernel = exec_.simd == simd::Level::kAvx2 ? detail::dense_sgd_kernel_avx2 : detail::dense_sgd_kernel_portable;

  // Each entry's update reads only that entry, so the split does not change
  // a result.
  detail::for_each_slice(args.count, exec_, [&](std::size_t begin, std::size_t end) {
    detail::DenseSgdKernelArgs part = args;
    part.param += begin;
    if (part.momentum_buffer != nullptr) part.momentum_buffer += begin;
    part.grad += begin;
    part.count = end - begin;
    kernel(part);
  });
}

}  // namespace st::optim
