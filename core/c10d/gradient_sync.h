#pragma once
// Internal to core/c10d: the two ways GlooDdp averages gradients across
// ranks, behind one interface so the step loop (gloo_ddp.cc) is shared.
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/c10d/gloo_ddp.h"

namespace st::c10d_ddp {

struct GlooGroupState;

// Per step, GlooDdp calls before_forward() on its own thread, then each
// local worker calls before_backward(worker) right before its backward, and
// after every worker's backward has returned GlooDdp calls after_backward(),
// which leaves the averaged gradient in replica 0's .grad.
class GradientSync {
 public:
  virtual ~GradientSync() = default;
  virtual GradientEngine engine() const = 0;
  virtual void before_forward() = 0;
  virtual void before_backward(int worker) = 0;
  virtual void after_backward() = 0;
  // Parameter indices per bucket, in allreduce order.
  virtual std::vector<std::vector<std::size_t>> bucket_layout() const = 0;
};

// c10d::Reducer over one replica's parameters (G must be 1).
std::unique_ptr<GradientSync> make_reducer_sync(const GlooGroupState& group, const std::vector<at::Tensor>& parameters,
                                                const GlooDdpOptions& options);

// Bucketed ProcessGroupGloo::allreduce fed by autograd hooks on every local
// replica; replica_parameters[g] are worker g's parameters.
std::unique_ptr<GradientSync> make_bucketed_allreduce_sync(const GlooGroupState& group,
                                                           std::vector<std::vector<at::Tensor>> replica_parameters,
                                                           const GlooDdpOptions& options);

// "<what> failed on rank R of W: <reason>", without c10's backtrace.
std::string collective_failure(const GlooGroupState& group, const std::string& what, const std::exception& error);

}  // namespace st::c10d_ddp
