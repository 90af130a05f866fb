#include "core/device/staging.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <fmt/format.h>

#include <chrono>
#include <mutex>
#include <stdexcept>

#include "core/device/copy_engine.h"

namespace st::device {
namespace {

class DirectStaging final : public WorkerStaging {
 public:
  explicit DirectStaging(std::vector<at::Tensor> params) : params_(std::move(params)) {}

  void begin_backward() override {}
  void stage(std::size_t, const at::Tensor&) override {}

  const float* host(std::size_t layer) override {
    const at::Tensor& grad = params_.at(layer).grad();
    return grad.defined() ? grad.data_ptr<float>() : nullptr;
  }

  void load(const std::vector<std::vector<float>>& values, const std::vector<at::Tensor>& params) override {
    copy_to_parameters(values, params);
  }

  double run_compute(const std::function<void()>& work) override {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  std::vector<at::Tensor> params_;
};

class CopyStaging final : public WorkerStaging {
 public:
  CopyStaging(std::unique_ptr<CopyEngine> engine, const std::vector<std::size_t>& numels)
      : engine_(std::move(engine)), layers_(numels.size()) {
    for (std::size_t l = 0; l < numels.size(); ++l) {
      layers_[l].gradient = engine_->host_buffer(numels[l]);
      layers_[l].parameter = engine_->host_buffer(numels[l]);
    }
  }

  void begin_backward() override {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& layer : layers_) layer.copied.reset();
  }

  void stage(std::size_t layer, const at::Tensor& grad) override {
    Layer& l = at_layer(layer);
    std::lock_guard<std::mutex> lock(mutex_);  // hooks of several layers may run on different device threads
    engine_->follow_compute();
    engine_->copy(grad, l.gradient);
    l.copied = engine_->mark();
  }

  const float* host(std::size_t layer) override {
    Layer& l = at_layer(layer);
    std::shared_ptr<CopyMark> copied;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      copied = l.copied;
    }
    if (!copied) return nullptr;
    copied->wait();
    return l.gradient.data_ptr<float>();
  }

  void load(const std::vector<std::vector<float>>& values, const std::vector<at::Tensor>& params) override {
    if (values.size() != layers_.size() || params.size() != layers_.size())
      throw std::invalid_argument(fmt::format("staging load: {} values and {} parameters for {} layers", values.size(),
                                              params.size(), layers_.size()));
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const int64_t n = layers_[l].parameter.numel();
      if (static_cast<int64_t>(values[l].size()) != n || params[l].numel() != n)
        throw std::invalid_argument(
            fmt::format("staging load: layer {} has {} values for {} elements", l, values[l].size(), n));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    // The host buffers may still feed the last load's copies.
    if (loaded_) loaded_->wait();
    engine_->follow_compute();
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const auto& v = values[l];
      at::Tensor& buffer = layers_[l].parameter;
      std::copy(v.begin(), v.end(), buffer.data_ptr<float>());
      // Detached: an in-place copy into a parameter that requires grad is
      // refused under autograd, and the copy may run on another thread
      // (the host engine's) where no NoGradGuard of ours applies.
      engine_->copy(buffer, params[l].detach());
    }
    loaded_ = engine_->mark();
  }

  double run_compute(const std::function<void()>& work) override {
    std::shared_ptr<CopyMark> loaded;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      loaded = loaded_;
    }
    return engine_->run_compute([&] {
      if (loaded) engine_->compute_waits(*loaded);
      work();
    });
  }

 private:
  struct Layer {
    at::Tensor gradient;               // host copy of the gradient
    at::Tensor parameter;              // host staging of the parameter's next value
    std::shared_ptr<CopyMark> copied;  // this backward's gradient copy; none: not staged
  };

  Layer& at_layer(std::size_t layer) {
    if (layer >= layers_.size())
      throw std::out_of_range(fmt::format("staging: layer {} of {}", layer, layers_.size()));
    return layers_[layer];
  }

  std::unique_ptr<CopyEngine> engine_;
  std::vector<Layer> layers_;
  std::shared_ptr<CopyMark> loaded_;
  std::mutex mutex_;
};

}  // namespace

void copy_to_parameters(const std::vector<std::vector<float>>& values, const std::vector<at::Tensor>& params) {
  if (values.size() != params.size())
    throw std::invalid_argument(fmt::format("copy to parameters: {} values for {} parameters", values.size(), params.size()));
  c10::NoGradGuard no_grad;
  for (std::size_t l = 0; l < params.size(); ++l) {
    const auto& v = values[l];
    if (static_cast<int64_t>(v.size()) != params[l].numel())
      throw std::invalid_argument(
          fmt::format("copy to parameters: layer {} has {} values for {} elements", l, v.size(), params[l].numel()));
    params[l].copy_(at::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())}, at::kFloat)
                        .view_as(params[l]));
  }
}

std::unique_ptr<WorkerStaging> make_direct_staging(const std::vector<at::Tensor>& params) {
  return std::make_unique<DirectStaging>(params);
}

std::unique_ptr<WorkerStaging> make_copy_staging(std::unique_ptr<CopyEngine> engine,
                                                 const std::vector<std::size_t>& numels) {
  return std::make_unique<CopyStaging>(std::move(engine), numels);
}

std::unique_ptr<WorkerStaging> make_worker_staging(const ComputeDevice& device, int worker,
                                                   const std::vector<at::Tensor>& params) {
  if (!device.is_cuda()) return make_direct_staging(params);
  std::vector<std::size_t> numels;
  for (const auto& p : params) numels.push_back(static_cast<std::size_t>(p.numel()));
  return make_copy_staging(make_cuda_copy_engine(cuda_index_for_worker(device, worker, cuda_device_count())), numels);
}

}  // namespace st::device
