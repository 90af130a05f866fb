#pragma once
// STUB for Debian's LibTorch 1.13.1, which ships libtorch_cpu with the
// distributed-autograd code compiled in but does not install this header.
// c10d/reducer.hpp includes it on non-Windows builds and needs exactly two
// names from it:
//   - DistAutogradContext::GradCallback, only in a static_assert that it is
//     std::function<bool(at::Tensor&)> (the Reducer's own GradCallback type);
//   - ContextPtr, held by Reducer::RpcContext as a std::shared_ptr plus an
//     atomic raw pointer. A shared_ptr has the same size and layout whatever
//     it points to, so Reducer's object layout is unchanged by this stub.
// Nothing here is ever constructed or called from our code: the Reducer's
// member functions that touch the context live in libtorch_cpu and use the
// real class. core/c10d/CMakeLists.txt puts this directory on the include
// path only when the real header is missing (a full LibTorch ships it).
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
