#pragma once
// The node's float32 master copy of the parameters, one array per layer
// (parameter tensor), each with a version: the number of optimizer updates
// applied to it. The staleness barrier is expressed here: a forward that
// needs version >= v for every layer registers a continuation that runs once
// the slowest layer gets there. Per-layer locks let the optimizer of one
// layer run while another layer is copied into the replicas.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "core/runtime/executor.h"
#include "core/util/huge_page_allocator.h"

namespace st::train {

class VersionedParameters {
 public:
  // How readers see a layer (called under the layer's lock): writes to
  // `out` the values a reader that wants version `target` should use, from
  // the stored ones. A system whose optimizer defers work (exact lazy
  // momentum) or predicts missing updates (weight prediction for a stale
  // forward) installs one; without it readers get the stored values.
  using LayerView = std::function<void(std::size_t layer, const float* stored, std::size_t n, int target, float* out)>;

  VersionedParameters(runtime::Executor& executor, const std::vector<std::vector<float>>& initial);

  // Install before training starts.
  void set_view(LayerView view) { view_ = std::move(view); }
  bool has_view() const { return static_cast<bool>(view_); }
  // The layer as a reader wanting version `target` sees it (n floats to out).
  void read_layer(std::size_t layer, int target, float* out);

  std::size_t layers() const { return layers_.size(); }
  std::size_t numel(std::size_t layer) const { return layers_[layer].values.size(); }

  // Runs fn(data, numel) holding the layer's lock.
  void with_layer(std::size_t layer, const std::function<void(float*, std::size_t)>& fn);

  // Sets the layer's version; continuations whose condition now holds are
  // posted to the executor.
  void publish(std::size_t layer, int version);
  int version(std::size_t layer) const;
  int min_version() const;

  // Posts `ready` once every layer's version is >= v (at once if it is).
  void when_all_at_least(int v, runtime::Task ready);

  // FNV-1a over every layer's stored bytes: equal on all ranks iff bitwise equal.
  uint64_t checksum();
  // What a reader sees of every layer at its current version, for
  // evaluation and tests.
  std::vector<std::vector<float>> snapshot();

 private:
  struct Layer {
    LargeVector<float> values;
    std::mutex mutex;
  };
  struct Waiter {
    int version;
    runtime::Task task;
  };
  runtime::Executor& executor_;
  LayerView view_;
  std::vector<Layer> layers_;
  mutable std::mutex versions_mutex_;
  std::vector<int> versions_;
  std::vector<Waiter> waiters_;
};

}  // namespace st::train
