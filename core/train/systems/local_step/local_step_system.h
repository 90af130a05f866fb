#pragma once
// The base of the systems in which each node (a cluster: its G local workers
// and the parameter server that holds the master copy) takes its own
// optimizer steps, and the clusters meet by exchanging models or gradient
// accumulations rather than by reducing every step's gradients: local-sgd,
// cloudless-ma and cloudless-asgd-ga (docs/systems.md).
//
// One iteration on a node: before_iteration(t), load the master into the
// replicas, forward and backward on every worker (summed per layer in the
// node, core/train/node/local_workers.h), before_step(t), one dense SGD step of
// the master with gradient x step_scale(t), after_step(t). The hooks pass
// continuations (nothing blocks inside a task), so a system may wait in any
// of them (for a round of model averaging, for a peer's accumulation) or go
// on at once. drain() runs after the last iteration, before `finished`; the
// last iteration is reported once it is done, with the traffic of the
// rounds that drain() completed added to its record (they happened after
// its step but belong to the run: a round that lands after the last
// iteration would otherwise count nowhere).
#include <cstddef>
#include <memory>
#include <vector>

#include "core/train/system.h"

namespace st::optim {
class DenseSgd;
class DenseSgdState;
}  // namespace st::optim

namespace st::train {

class LocalStepSystem : public System {
 public:
  explicit LocalStepSystem(NodeContext& ctx);
  ~LocalStepSystem() override;
  void start(runtime::Task finished) override;

 protected:
  // Each hook calls `next` exactly once, from a task.
  virtual void before_iteration(int t, IterationRecord& record, runtime::Task next);
  // grads() hold this node's gradient summed over its workers; a system may
  // reduce it across nodes or add other clusters' contributions here.
  virtual void before_step(int t, IterationRecord& record, runtime::Task next);
  // The master holds version t + 1 of every layer.
  virtual void after_step(int t, IterationRecord& record, runtime::Task next);
  // Adds what its rounds sent and received to `last`, the last iteration's
  // record, which is reported after `next`.
  virtual void drain(IterationRecord& last, runtime::Task next);
  // What the step multiplies the gradient by: 1 / G averages over the
  // node's own workers, 1 / (N G) over every worker of every node.
  virtual float step_scale(int t) const = 0;

  // One dense SGD step of every master layer with grads() x scale, at the
  // learning rate of iteration t (warmup), as a compute task; then `done`.
  void step_master(int t, float scale, runtime::Task done);

  std::vector<std::vector<float>>& grads() { return grads_; }
  std::size_t total_numel() const { return total_numel_; }
  float node_mean_scale() const;  // 1 / G
  float world_mean_scale() const;  // 1 / (N G)

  // The master as one flat vector (layer after layer), and back. Call
  // from a task; each layer is read or written under its lock.
  void copy_master_to(float* flat);
  void copy_master_from(const float* flat);
  // master += a - b, layer by layer (a and b flat).
  void add_difference_to_master(const float* a, const float* b);

  NodeContext& ctx_;
  std::vector<std::size_t> numels_;

 private:
  void run_iteration(int t);
  void after_gradients(int t);
  void report(int t);

  std::unique_ptr<optim::DenseSgd> optimizer_;
  std::vector<std::unique_ptr<optim::DenseSgdState>> optim_states_;
  std::vector<std::vector<float>> grads_;
  std::vector<std::vector<float>> staged_;
  std::size_t total_numel_ = 0;
  IterationRecord record_;
  runtime::Task finished_;
};

}  // namespace st::train
