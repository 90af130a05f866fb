// Sparse Adam with lazily decayed moments (docs/optim.md).
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/optim/kernels.h"
#include "core/optim/sparse_optimizer.h"
#include "core/optim/step_common.h"

namespace st::optim {
namespace {

constexpr const char* kName = "sparse_adam";

// The same checks as torch::optim::Adam's constructor.
void check_adam_options(const AdamOptions& o) {
  using detail::require;
  const std::string who = std::string(kName) + ": ";
  require(o.lr >= 0, who + "invalid learning rate " + std::to_string(o.lr));
  require(o.eps >= 0, who + "invalid epsilon " + std::to_string(o.eps));
  require(o.beta1 >= 0 && o.beta1 < 1, who + "invalid beta1 " + std::to_string(o.beta1));
  require(o.beta2 >= 0 && o.beta2 < 1, who + "invalid beta2 " + std::to_string(o.beta2));
  require(o.weight_decay >= 0, who + "invalid weight_decay " + std::to_string(o.weight_decay));
}

class SparseAdam final : public SparseOptimizer {
 public:
  SparseAdam(const AdamOptions& options, const ExecutionOptions& exec)
      : options_(options),
        exec_(exec),
        beta1_powers_(options.beta1),
        beta2_powers_(options.beta2),
        kernel_(exec.simd == simd::Level::kAvx2 ? detail::adam_kernel_avx2 : detail::adam_kernel_portable) {}

  std::string name() const override { return kName; }

  std::unique_ptr<ParamState> make_state(std::size_t numel, const std::string& tensor_name) const override {
    auto state = std::make_unique<AdamState>();
    state->name = tensor_name;
    state->numel = numel;
    state->exp_avg.assign(numel, 0.0f);
    state->exp_avg_sq.assign(numel, 0.0f);
    state->last_step.assign(numel, 0);
    return state;
  }

  void step(Span<float> param, SparseGrad grad, ParamState& base_state) override {
    AdamState& state = checked_state(base_state);
    detail::validate_step(kName, param, grad, state);
    ++state.step;
    detail::run_chunked(kernel_, kernel_args(param, state), grad, exec_);
  }

 private:
  static AdamState& checked_state(ParamState& base_state) {
    auto* state = dynamic_cast<AdamState*>(&base_state);
    // Messages are built only on failure: a valid step must not allocate.
    const auto fail = [&](const char* detail) {
      throw std::invalid_argument(std::string(kName) + ": tensor '" + base_state.name + "': " + detail);
    };
    if (state == nullptr) fail("state was not made by this optimizer");
    const std::size_t n = state->numel;
    if (state->exp_avg.size() != n || state->exp_avg_sq.size() != n || state->last_step.size() != n) {
      fail("state buffers do not have numel entries");
    }
    return *state;
  }

  // Bias corrections in double from the tensor's step count, then rounded
  // to float where torch hands them to a float kernel as a Scalar.
  detail::AdamKernelArgs kernel_args(Span<float> param, AdamState& state) const {
    const double t = static_cast<double>(state.step);
    const double bias_correction1 = 1 - std::pow(options_.beta1, t);
    const double bias_correction2 = 1 - std::pow(options_.beta2, t);
    detail::AdamKernelArgs args;
    args.param = param.data();
    args.exp_avg = state.exp_avg.data();
    args.exp_avg_sq = state.exp_avg_sq.data();
    args.last_step = state.last_step.data();
    args.step = state.step;
    args.gather_ok = detail::fits_gather(state.numel);
    args.weight_decay = static_cast<float>(options_.weight_decay);
    args.beta1 = static_cast<float>(options_.beta1);
    args.one_minus_beta1 = static_cast<float>(1 - options_.beta1);
    args.beta2 = static_cast<float>(options_.beta2);
    args.one_minus_beta2 = static_cast<float>(1 - options_.beta2);
    args.eps = static_cast<float>(options_.eps);
    args.neg_step_size = static_cast<float>(-(options_.lr * state.lr_scale / bias_correction1));
    args.sqrt_bias_correction2 = static_cast<float>(std::sqrt(bias_correction2));
    args.beta1_powers = &beta1_powers_;
    args.beta2_powers = &beta2_powers_;
    return args;
  }

  AdamOptions options_;
  ExecutionOptions exec_;
  detail::DecayPowers beta1_powers_;
  detail::DecayPowers beta2_powers_;
  detail::AdamKernel kernel_;
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_sparse_adam(const AdamOptions& options, const ExecutionOptions& exec) {
  check_adam_options(options);
  detail::check_execution_options(exec);
  return std::make_unique<SparseAdam>(options, exec);
}

}  // namespace st::optim
