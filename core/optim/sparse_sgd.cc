// Sparse SGD with lazily decayed momentum (docs/optim.md).
#include <memory>
#include <stdexcept>
#include <string>

#include <cstring>

#include "core/optim/entry_math.h"
#include "core/optim/kernels.h"
#include "core/optim/sparse_optimizer.h"
#include "core/optim/step_common.h"

namespace st::optim {
namespace {

constexpr const char* kName = "sparse_sgd";

class SparseSgd final : public SparseOptimizer {
 public:
  SparseSgd(const SgdOptions& options, const ExecutionOptions& exec)
      : options_(options),
        exec_(exec),
        momentum_powers_(options.momentum),
        momentum_sums_(options.momentum),
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

  // An entry last listed at step `last` of a tensor now at step T has missed
  // g = T - last steps. Dense momentum with zero gradients moves it by
  // lr x buf x scale x S(n) over n steps; the exact rule has deferred S(g) of
  // that, the decay rule has dropped it (its buffer only decays). Either way
  // the next `ahead` steps add S(g + ahead) - S(g).
  void extrapolate(Span<const float> param, const ParamState& base_state, uint32_t ahead,
                   Span<float> out) const override {
    const SgdState& state = checked_state(base_state);
    detail::require(param.size() == state.numel && out.size() == state.numel,
                    std::string(kName) + ": tensor '" + state.name + "': extrapolate needs " +
                        std::to_string(state.numel) + " entries in and out");
    const bool exact = options_.lazy == LazyMomentum::kExact;
    if (!has_momentum() || (ahead == 0 && !exact)) {
      std::memcpy(out.data(), param.data(), param.size() * sizeof(float));
      return;
    }
    const float neg_lr = static_cast<float>(-1 * (options_.lr * state.lr_scale));
    const float scale = catch_up_scale();
    const float* buf = state.momentum_buffer.data();
    const uint32_t* last = state.last_step.data();
    for (std::size_t i = 0; i < param.size(); ++i) {
      const uint32_t gap = last[i] == 0 ? 0 : state.step - last[i];
      const float sum = detail::sum_of_powers(momentum_sums_, gap + ahead) -
                        (exact ? 0.0f : detail::sum_of_powers(momentum_sums_, gap));
      out[i] = last[i] == 0 ? param[i] : param[i] + neg_lr * (buf[i] * (scale * sum));
    }
  }

 private:
  // torch tests `momentum != 0` in double precision; so do we.
  bool has_momentum() const { return options_.momentum != 0.0; }

  // Nesterov steps move by momentum x buf per zero-gradient step, plain ones by buf.
  float catch_up_scale() const { return options_.nesterov ? static_cast<float>(options_.momentum) : 1.0f; }

  SgdState& checked_state(ParamState& base_state) const {
    return const_cast<SgdState&>(checked_state(static_cast<const ParamState&>(base_state)));
  }

  const SgdState& checked_state(const ParamState& base_state) const {
    const auto* state = dynamic_cast<const SgdState*>(&base_state);
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
    args.neg_lr = static_cast<float>(-1 * (options_.lr * state.lr_scale));
    args.weight_decay = static_cast<float>(options_.weight_decay);
    args.momentum = static_cast<float>(options_.momentum);
    args.damped_scale = static_cast<float>(1 - options_.dampening);
    args.nesterov = options_.nesterov;
    args.momentum_powers = &momentum_powers_;
    if (options_.lazy == LazyMomentum::kExact) {
      args.catch_up = &momentum_sums_;
      args.catch_up_scale = catch_up_scale();
    }
    return args;
  }

  SgdOptions options_;
  ExecutionOptions exec_;
  detail::DecayPowers momentum_powers_;
  detail::PowerSums momentum_sums_;
  detail::SgdKernel kernel_;
};

}  // namespace

void SparseOptimizer::extrapolate(Span<const float> param, const ParamState&, uint32_t, Span<float> out) const {
  detail::require(out.size() == param.size(), name() + ": extrapolate: output size differs from the parameter's");
  std::memcpy(out.data(), param.data(), param.size() * sizeof(float));
}

const char* lazy_momentum_name(LazyMomentum lazy) { return lazy == LazyMomentum::kExact ? "exact" : "decay"; }

LazyMomentum parse_lazy_momentum(const std::string& text) {
  if (text == "decay") return LazyMomentum::kDecay;
  if (text == "exact") return LazyMomentum::kExact;
  throw std::invalid_argument("lazy momentum '" + text + "' is not one of: decay, exact");
}

std::unique_ptr<SparseOptimizer> make_sparse_sgd(const SgdOptions& options, const ExecutionOptions& exec) {
  detail::check_sgd_options(kName, options);
  detail::check_execution_options(exec);
  return std::make_unique<SparseSgd>(options, exec);
}

}  // namespace st::optim
