#pragma once
// STUB for Debian's LibTorch 1.13.1, which ships libtorch_cpu with the
// distributed-autograd code compiled in but does not install this header.
// c10d/reducer.hpp includes it on non-Windows builds and needs exactly two
// names from it:
//   - DistAutogradContext::GradCallback, only in a static_assert that it is
//     std::function<bool(at::Tensor&)> (the Reducer's own GradCallback type);
//   - ContextPtr, held by Reducer::RpcContext as a std::shared_ptr plus an
//     atomic raw pointer (rpc_context_, a protected member of Reducer).
//
// Why this is safe although the real class has members and this one none:
//   - Layout. We compile Reducer's class definition and allocate Reducers
//     (std::make_unique in reducer_sync.cc) that libtorch's constructor then
//     fills in, so both must agree on sizeof(Reducer) and every member's
//     offset. The only members whose types come from this header are
//     std::shared_ptr<DistAutogradContext> and
//     std::atomic<DistAutogradContext*>, whose size and alignment do not
//     depend on the pointee; everything else in Reducer is unchanged.
//   - No use of the class body. Reducer's constructor, destructor and
//     RpcContext::set are declared in reducer.hpp and defined in
//     libtorch_cpu, so RpcContext's implicit constructor and destructor are
//     instantiated there, with the real class. No inline function of
//     reducer.hpp reads rpc_context_. The code that does (autograd_hook
//     sets it from the thread-local dist-autograd context, and
//     runGradCallbackForVariable loads it and, when not null, calls into the
//     context) is libtorch's own, compiled against the real header. Outside
//     distributed autograd (always, here) that pointer stays null.
//   - Nothing from this class is emitted by our code: no virtual functions,
//     no typeinfo, no member functions; it is never constructed, copied,
//     deleted or dereferenced here. Two different bodies of one class in
//     one program are formally an ODR violation, but one without any
//     symbol or code for the two to disagree on.
//
// tests/c10d_reducer_layout_test.cc pins this down: static_asserts on the
// sizes and alignments of those member types and of Reducer::RpcContext,
// and a run of the real Reducer through forward and backward (the code path
// that sets and reads the context), after which members declared after
// rpc_context_, read through this build's layout, hold what libtorch wrote.
// A LibTorch whose reducer.hpp uses more of this header fails to compile
// here instead; one whose RpcContext changes fails that test.
//
// core/c10d/CMakeLists.txt puts this directory on the include path only when
// the real header is missing (a full LibTorch ships it). docs/ddp-gloo.md
// ("Debian LibTorch caveats") says the same.
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>

namespace torch {
namespace distributed {
namespace autograd {

class DistAutogradContext {
 public:
  using GradCallback = std::function<bool(at::Tensor&)>;
};

using ContextPtr = std::shared_ptr<DistAutogradContext>;

}  // namespace autograd
}  // namespace distributed
}  // namespace torch
