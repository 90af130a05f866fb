#include "core/train/node/versioned_parameters.h"

#include <algorithm>
#include <cstring>

namespace st::train {

VersionedParameters::VersionedParameters(runtime::Executor& executor,
                                         const std::vector<std::vector<float>>& initial)
    : executor_(executor), layers_(initial.size()), versions_(initial.size(), 0) {
  for (std::size_t l = 0; l < initial.size(); ++l) layers_[l].values.assign(initial[l].begin(), initial[l].end());
}

void VersionedParameters::with_layer(std::size_t layer, const std::function<void(float*, std::size_t)>& fn) {
  Layer& l = layers_.at(layer);
  std::lock_guard<std::mutex> lock(l.mutex);
  fn(l.values.data(), l.values.size());
}

void VersionedParameters::read_layer(std::size_t layer, int target, float* out) {
  Layer& l = layers_.at(layer);
  std::lock_guard<std::mutex> lock(l.mutex);
  if (view_) {
    view_(layer, l.values.data(), l.values.size(), target, out);
  } else {
    std::memcpy(out, l.values.data(), l.values.size() * sizeof(float));
  }
}

int VersionedParameters::version(std::size_t layer) const {
  std::lock_guard<std::mutex> lock(versions_mutex_);
  return versions_.at(layer);
}

int VersionedParameters::min_version() const {
  std::lock_guard<std::mutex> lock(versions_mutex_);
  return versions_.empty() ? 0 : *std::min_element(versions_.begin(), versions_.end());
}

void VersionedParameters::publish(std::size_t layer, int version) {
  std::vector<runtime::Task> ready;
  {
    std::lock_guard<std::mutex> lock(versions_mutex_);
    versions_.at(layer) = version;
    const int low = *std::min_element(versions_.begin(), versions_.end());
    auto keep = std::partition(waiters_.begin(), waiters_.end(), [low](const Waiter& w) { return w.version > low; });
    for (auto it = keep; it != waiters_.end(); ++it) ready.push_back(std::move(it->task));
    waiters_.erase(keep, waiters_.end());
  }
  for (auto& task : ready) executor_.post(std::move(task));
}

void VersionedParameters::when_all_at_least(int v, runtime::Task ready) {
  {
    std::lock_guard<std::mutex> lock(versions_mutex_);
    const int low = versions_.empty() ? v : *std::min_element(versions_.begin(), versions_.end());
    if (low < v) {
      waiters_.push_back({v, std::move(ready)});
      return;
    }
  }
  executor_.post(std::move(ready));
}

uint64_t VersionedParameters::checksum() {
  uint64_t hash = 1469598103934665603ull;
  for (auto& layer : layers_) {
    std::lock_guard<std::mutex> lock(layer.mutex);
    const auto* bytes = reinterpret_cast<const unsigned char*>(layer.values.data());
    for (std::size_t i = 0; i < layer.values.size() * sizeof(float); ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

std::vector<std::vector<float>> VersionedParameters::snapshot() {
  std::vector<std::vector<float>> out(layers_.size());
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    out[l].resize(layers_[l].values.size());
    read_layer(l, version(l), out[l].data());
  }
  return out;
}

}  // namespace st::train
