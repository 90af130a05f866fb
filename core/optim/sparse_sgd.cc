// Sparse SGD with lazily decayed momentum (docs/optim.md).
#include <memory>
#include <stdexcept>
#include <string>

#include "core/optim/kernels.h"
#include "core/optim/sparse_optimizer.h"
#include "core/optim/step_common.h"

namespace st::optim {
namespace {

constexpr const char* kName = "sparse_sgd";

// The same checks as torch::optim::SGD's constructor.
void check_sgd_options(const SgdOptions& o) {
  using detail::require;
  require(o.lr >= 0, std::string(kName) + ": invalid learning rate " + std::to_string(o.lr));
  require(o.momentum >= 0, std::string(kName) + ": invalid momentum " + std::to_string(o.momentum));
  require(o.weight_decay >= 0, std::string(kName) + ": invalid weight_decay " + std::to_string(o.weight_decay));
  require(!o.nesterov || (o.momentum > 0 && o.dampening == 0),
          std::string(kName) + ": Nesterov momentum requires a momentum and zero dampening");
}

class SparseSgd final : public SparseOptimizer {
 public:
  SparseSgd(const SgdOptions& options, const ExecutionOptions& exec)
      : options_(options),
        exec_(exec),
        momentum_powers_(options.momentum),
        kernel_(exec.simd == simd::Level::kAvx2 ? detail::sgd_kernel_avx2 : detail::sgd_kernel_portable) {}

  std::string name() const override { return kName; }

  std::unique_ptr<ParamState> make_state(std::size_t numel, const std::string& tensor_name) const override {
    auto state = std::make_unique<SgdState>();
    state->name = tensor_name;
    state->numel = numel;
    if (has_momentum()) {
      state->momentum_buffer.assign(numel, 0.0f);
      state->last_step.assign(numel, 0);
    }
    return state;
  }

  void step(Span<float> param, SparseGrad grad, ParamState& base_state) override {
    SgdState& state = checked_state(base_state);
    detail::validate_step(kName, param, grad, state);
    ++state.step;
    detail::run_chunked(kernel_, kernel_args(param, state), grad, exec_);
  }

 private:
  // torch tests `momentum != 0` in double precision; so do we.
  bool has_momentum() const { return options_.momentum != 0.0; }

  SgdState& checked_state(ParamState& base_state) const {
    auto* state = dynamic_cast<SgdState*>(&base_state);
    // Messages are built only on failure: a valid step must not allocate.
    const auto fail = [&](const char* detail) {
      throw std::invalid_argument(std::string(kName) + ": tensor '" + base_state.name + "': " + detail);
    };
    if (state == nullptr) fail("state was not made by this optimizer");
    const std::size_t expected = has_momentum() ? state->numel : 0;
    if (state->momentum_buffer.size() != expected || state->last_step.size() != expected) {
      fail("state does not match this optimizer's momentum setting");
    }
    return *state;
  }

  // Scalars rounded to float as torch rounds the Scalar arguments of add_,
  // mul_ and add(other, alpha).
  detail::SgdKernelArgs kernel_args(Span<float> param, SgdState& state) const {
    detail::SgdKernelArgs args;
    args.param = param.data();
    if (has_momentum()) {
      args.momentum_buffer = state.momentum_buffer.data();
      args.last_step = state.last_step.data();
    }
    args.step = state.step;
    args.gather_ok = detail::fits_gather(state.numel);
    args.neg_lr = static_cast<float>(-1 * options_.lr);
    args.weight_decay = static_cast<float>(options_.weight_decay);
    args.momentum = static_cast<float>(options_.momentum);
    args.damped_scale = static_cast<float>(1 - options_.dampening);
    args.nesterov = options_.nesterov;
    args.momentum_powers = &momentum_powers_;
    return args;
  }

  SgdOptions options_;
  ExecutionOptions exec_;
  detail::DecayPowers momentum_powers_;
  detail::SgdKernel kernel_;
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_sparse_sgd(const SgdOptions& options, const ExecutionOptions& exec) {
  check_sgd_options(options);
  detail::check_execution_options(exec);
  return std::make_unique<SparseSgd>(options, exec);
}

}  // namespace st::optim
