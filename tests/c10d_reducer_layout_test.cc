// The distributed-autograd context stub (core/c10d/stubs/.../context.h)
// against the Reducer compiled into libtorch_cpu. Our translation units
// compile c10d::Reducer's class definition with the stub in place of the
// real context header, then allocate Reducers (std::make_unique in
// reducer_sync.cc) whose members libtorch's own code constructs and uses.
// That is only sound while both see the same object layout, so:
//   * at compile time: the two members whose types come from the stub
//     (RpcContext's shared_ptr and atomic pointer) have the size and
//     alignment those templates have for any pointee;
//   * at run time: a real Reducer over a one-rank ProcessGroupGloo runs
//     forward and backward (the autograd hook sets rpc_context_ from
//     libtorch's thread-local dist-autograd context, and each gradient goes
//     through runGradCallbackForVariable, which loads it): every member
//     declared after rpc_context_ that a subclass can read holds what
//     libtorch wrote there, and the gradients come out right. A stub that
//     shifted the layout would move those members and fail here (or crash)
//     rather than corrupt a training run.
#include <gtest/gtest.h>
#include <torch/csrc/distributed/c10d/reducer.hpp>
#include <torch/torch.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <type_traits>

#include "core/c10d/gloo_group.h"
#include "free_port.h"
#include "core/c10d/gloo_group_state.h"

namespace st::c10d_ddp {
namespace {

using DistAutogradContext = torch::distributed::autograd::DistAutogradContext;

// Reads, through this build's view of the class, the protected members that
// libtorch's code writes.
class ReducerLayoutProbe : public ::c10d::Reducer {
 public:
  using ::c10d::Reducer::Reducer;
  using Context = RpcContext;

  int64_t bucket_bytes_cap() const { return bucket_bytes_cap_; }  // just before rpc_context_
  const RpcContext& rpc_context() const { return rpc_context_; }
  int div_factor() const { return div_factor_; }  // the ones below come after it
  bool static_graph() const { return static_graph_; }
  const std::unordered_map<size_t, int>& grad_hooks_triggered() const { return numGradHooksTriggeredMap_; }
  const c10::intrusive_ptr<::c10d::Work>& forward_pass_work() const { return forwardPassWorkHandle_.workHandle; }
  const c10::intrusive_ptr<::c10d::ProcessGroup>& process_group() const { return process_group_; }
};

// A shared_ptr and an atomic pointer are laid out the same whatever they
// point to: that is what makes a stub with another class body harmless.
static_assert(std::is_same_v<ReducerLayoutProbe::Context::ContextPtr, std::shared_ptr<DistAutogradContext>>);
static_assert(sizeof(std::shared_ptr<DistAutogradContext>) == sizeof(std::shared_ptr<void>));
static_assert(alignof(std::shared_ptr<DistAutogradContext>) == alignof(std::shared_ptr<void>));
static_assert(sizeof(std::atomic<DistAutogradContext*>) == sizeof(std::atomic<void*>));
static_assert(alignof(std::atomic<DistAutogradContext*>) == alignof(std::atomic<void*>));
static_assert(sizeof(ReducerLayoutProbe::Context) == sizeof(std::shared_ptr<void>) + sizeof(std::atomic<void*>),
              "Reducer::RpcContext gained a member: re-check the stub against this LibTorch's reducer.hpp");
static_assert(std::is_same_v<DistAutogradContext::GradCallback, std::function<bool(at::Tensor&)>>);

using test::free_port;

TEST(C10dContextStub, RealReducerSeesTheLayoutThisBuildCompiled) {
  GlooGroupOptions options;
  options.world_size = 1;
  options.master_port = free_port();
  options.timeout = std::chrono::milliseconds(20000);
  GlooGroup group = GlooGroup::connect(options);

  torch::manual_seed(3);
  const std::vector<at::Tensor> params = {torch::randn({4, 3}).requires_grad_(true),
                                          torch::randn({4}).requires_grad_(true)};
  constexpr int64_t kBucketCap = 12345;
  auto reducer = std::make_unique<ReducerLayoutProbe>(
      params, std::vector<std::vector<size_t>>{{1, 0}}, std::vector<size_t>{static_cast<size_t>(kBucketCap)},
      group.state()->process_group, std::vector<bool>(params.size(), false), kBucketCap,
      /*find_unused_parameters=*/false, /*gradient_as_bucket_view=*/false,
      std::unordered_map<size_t, std::string>{}, /*first_bucket_bytes_cap=*/kBucketCap);

  // As libtorch's constructor left them.
  EXPECT_EQ(reducer->bucket_bytes_cap(), kBucketCap);
  EXPECT_EQ(reducer->process_group().get(), group.state()->process_group.get());
  EXPECT_EQ(reducer->rpc_context().context_ptr_holder, nullptr);
  EXPECT_EQ(reducer->rpc_context().context_ptr.load(), nullptr);
  EXPECT_EQ(reducer->div_factor(), -1) << "libtorch's kUnsetDivFactor";
  EXPECT_FALSE(reducer->static_graph());
  EXPECT_FALSE(reducer->forward_pass_work());
  const std::unordered_map<size_t, int> no_hook_yet = {{0, 0}, {1, 0}};  // one entry per parameter
  EXPECT_EQ(reducer->grad_hooks_triggered(), no_hook_yet);
  // DDP(static_graph=True): libtorch sets static_graph_, and its autograd
  // hook then counts each parameter's gradient hooks in the first
  // iteration in numGradHooksTriggeredMap_ (declared after rpc_context_).
  reducer->set_static_graph();
  EXPECT_TRUE(reducer->static_graph());

  // One DDP step: the autograd hooks run libtorch's code that touches the
  // context (rpc_context_.set, then runGradCallbackForVariable).
  const at::Tensor input = torch::randn({5, 3});
  reducer->prepare_for_forward();
  const at::Tensor loss = (torch::matmul(input, params[0].t()) + params[1]).pow(2).sum();
  reducer->prepare_for_backward({});
  loss.backward();

  EXPECT_EQ(reducer->rpc_context().context_ptr_holder, nullptr) << "no dist-autograd context on this thread";
  EXPECT_EQ(reducer->rpc_context().context_ptr.load(), nullptr);
  EXPECT_EQ(reducer->div_factor(), -1) << "the default path divides without setting it";
  EXPECT_TRUE(reducer->static_graph());
  const std::unordered_map<size_t, int> one_hook_each = {{0, 1}, {1, 1}};
  EXPECT_EQ(reducer->grad_hooks_triggered(), one_hook_each);
  EXPECT_EQ(reducer->bucket_bytes_cap(), kBucketCap);

  // With one rank the reduced gradient is the local one.
  const at::Tensor w = params[0].detach().clone().requires_grad_(true);
  const at::Tensor b = params[1].detach().clone().requires_grad_(true);
  (torch::matmul(input, w.t()) + b).pow(2).sum().backward();
  EXPECT_TRUE(torch::allclose(params[0].grad(), w.grad()));
  EXPECT_TRUE(torch::allclose(params[1].grad(), b.grad()));
}

}  // namespace
}  // namespace st::c10d_ddp
