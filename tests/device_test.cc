// The device-generic parts of the engine (core/device): compute-device
// names, the GPU staging logic run over the host-thread copy engine (the
// CPU stand-in for a CUDA side stream and its events), and the direct
// staging the CPU engine uses. On a CPU-only LibTorch the CUDA engine is
// absent, and asking for it says so.
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/synthetic.h"
#include "core/device/compute_device.h"
#include "core/device/copy_engine.h"
#include "core/device/host_description.h"
#include "core/device/staging.h"
#include "core/model/gradient_hooks.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/train/config.h"
#include "core/train/run/trainer.h"
#include "tests/csv_test_util.h"
#include "tests/train_test_util.h"

namespace st::device {
namespace {

using namespace std::chrono_literals;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(ComputeDevice, ParsesCpuCudaAndIndexedCuda) {
  EXPECT_FALSE(parse_compute_device("cpu").is_cuda());
  EXPECT_TRUE(parse_compute_device("cuda").is_cuda());
  EXPECT_EQ(parse_compute_device("cuda").index, -1);
  EXPECT_EQ(parse_compute_device("cuda:0").index, 0);
  EXPECT_EQ(parse_compute_device("cuda:12").index, 12);
  for (const char* name : {"cpu", "cuda", "cuda:3"}) EXPECT_EQ(parse_compute_device(name).str(), name);
}

TEST(ComputeDevice, RejectsOtherNamesQuotingThem) {
  for (const char* bad : {"", "gpu", "CUDA", "cuda:", "cuda:x", "cuda:-1", "cuda:1:2", "cuda:12345", " cpu"}) {
    const auto message = error_of([&] { parse_compute_device(bad); });
    EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << bad << ": " << message;
    EXPECT_NE(message.find("cpu, cuda or cuda:N"), std::string::npos) << message;
  }
}

TEST(ComputeDevice, WorkersShareTheVisibleGpusRoundRobin) {
  const auto any = parse_compute_device("cuda");
  EXPECT_EQ(cuda_index_for_worker(any, 0, 1), 0);
  EXPECT_EQ(cuda_index_for_worker(any, 3, 1), 0);  // four workers on one GPU
  EXPECT_EQ(cuda_index_for_worker(any, 1, 2), 1);
  EXPECT_EQ(cuda_index_for_worker(any, 2, 2), 0);
  EXPECT_EQ(cuda_index_for_worker(parse_compute_device("cuda:1"), 0, 2), 1);
  EXPECT_NE(error_of([&] { cuda_index_for_worker(any, 0, 0); }).find("no CUDA device is visible"), std::string::npos);
  EXPECT_NE(error_of([&] { cuda_index_for_worker(parse_compute_device("cuda:2"), 0, 2); }).find("only 2 CUDA device(s)"),
            std::string::npos);
}

TEST(ComputeDevice, AvailabilityMatchesThisBuild) {
  EXPECT_NO_THROW(require_available(parse_compute_device("cpu")));
  if (cuda_built()) {
    if (cuda_device_count() > 0) {
      EXPECT_NO_THROW(require_available(parse_compute_device("cuda")));
    }
    return;
  }
  EXPECT_EQ(cuda_device_count(), 0);
  const auto message = error_of([] { require_available(parse_compute_device("cuda")); });
  EXPECT_NE(message.find("this build's LibTorch has no CUDA"), std::string::npos) << message;
  EXPECT_NE(error_of([] { make_cuda_copy_engine(0); }).find("no CUDA"), std::string::npos);
}

TEST(ComputeDevice, TrainConfigNamesTheField) {
  auto c = train::small_config("ddp");
  c.compute_device = "tpu";
  const auto message = error_of([&] { train::validate(c); });
  EXPECT_NE(message.find("compute_device"), std::string::npos) << message;
  EXPECT_NE(message.find("'tpu'"), std::string::npos) << message;
}

// A CUDA run asked of a CPU-only build stops before training, saying why.
TEST(ComputeDevice, CudaRunOnACpuBuildIsRefusedWithTheReason) {
  if (cuda_built()) return;  // nothing to refuse (not a skip: the GPU check counts skips)
  auto c = train::small_config("ddp");
  c.compute_device = "cuda";
  c.iterations = 1;
  const auto message = error_of([&] { train::train_real(c); });
  EXPECT_NE(message.find("no CUDA"), std::string::npos) << message;
}

// The machine a run names in its manifest: the CPU model read from
// /proc/cpuinfo's first "model name", and each GPU used where it computes
// on CUDA.
TEST(HostDescription, ReadsTheFirstModelName) {
  EXPECT_EQ(cpu_model_from("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
                           "processor\t: 1\nmodel name\t: other\n"),
            "AMD EPYC 7B13");
  EXPECT_EQ(cpu_model_from("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n"), "");  // e.g. arm64
  EXPECT_EQ(cpu_model_from("model name\t:\n"), "");
  EXPECT_EQ(cpu_model_from(""), "");
}

TEST(HostDescription, NamesTheCpuAndOnlyOnCudaTheGpus) {
  const auto cpu = host_description(parse_compute_device("cpu"), 2);
  EXPECT_FALSE(cpu.at("cpu").get<std::string>().empty());
  EXPECT_GE(cpu.at("hardware_threads").get<unsigned>(), 1u);
  EXPECT_FALSE(cpu.contains("gpus"));
  if (!cuda_built() || cuda_device_count() == 0) {
    const auto message = error_of([] { host_description(parse_compute_device("cuda"), 2); });
    EXPECT_NE(message.find("no CUDA"), std::string::npos) << message;
    return;
  }
  // Two local workers on the visible GPUs, round robin: each named once.
  const auto gpu = host_description(parse_compute_device("cuda"), 2);
  const std::size_t used = std::min(2, cuda_device_count());
  ASSERT_EQ(gpu.at("gpus").size(), used);
  EXPECT_EQ(gpu.at("gpus").at("cuda:0").get<std::string>(), cuda_device_name(0));
  EXPECT_FALSE(cuda_device_name(0).empty());
}

// A run's manifest names the machine.
TEST(HostDescription, TheManifestNamesTheMachine) {
  auto c = train::small_config("ddp");
  c.iterations = 1;
  const auto dir = std::filesystem::temp_directory_path() / "st-device-test-machine";
  std::filesystem::remove_all(dir);
  c.out_dir = dir.string();
  train::train_real(c);
  std::ifstream file(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(file);
  EXPECT_EQ(manifest.at("machine"), host_description(parse_compute_device("cpu"), c.gpus_per_node));
  std::filesystem::remove_all(dir);
}

// Holds the copy thread before each copy until released, counting copies.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int copies = 0;
  void pass() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return open; });
    ++copies;
  }
  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open = true;
    }
    changed.notify_all();
  }
};

at::Tensor filled(int64_t n, float first) { return torch::arange(first, first + static_cast<float>(n), torch::kFloat); }

TEST(HostCopyEngine, CopiesRunInOrderAndMarksCompleteAfterThem) {
  Gate gate;
  auto engine = make_host_thread_copy_engine([&] { gate.pass(); });
  auto a = engine->host_buffer(4), b = engine->host_buffer(4);
  engine->copy(filled(4, 1), a);
  const auto after_a = engine->mark();
  engine->copy(a, b);  // reads what the first copy wrote: order matters
  const auto after_b = engine->mark();
  std::this_thread::sleep_for(20ms);  // a window in which nothing may complete
  EXPECT_FALSE(after_a->ready());
  EXPECT_FALSE(after_b->ready());
  gate.release();
  after_b->wait();
  EXPECT_TRUE(after_a->ready());
  EXPECT_TRUE(torch::equal(b, filled(4, 1)));
  EXPECT_THROW(engine->copy(filled(3, 0), a), std::invalid_argument);
}

TEST(HostCopyEngine, AFailedCopyIsRethrownToWhoeverWaits) {
  auto engine = make_host_thread_copy_engine();
  const auto leaf = torch::zeros({4}, torch::requires_grad());
  engine->copy(filled(4, 1), leaf);  // in place into a leaf that requires grad: autograd refuses
  EXPECT_THROW(engine->mark()->wait(), c10::Error);
}

// The staging logic a GPU worker uses, over the CPU stand-in.
class CopyStagingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto engine = make_host_thread_copy_engine([this] { gate.pass(); });
    staging = make_copy_staging(std::move(engine), {3, 5});
  }
  Gate gate;
  std::unique_ptr<WorkerStaging> staging;
};

TEST_F(CopyStagingTest, HostWaitsForItsLayersCopyAlone) {
  staging->begin_backward();
  const auto grad1 = filled(5, 10);
  staging->stage(1, grad1);  // the last layer comes first, as in backward
  auto read = std::async(std::launch::async, [&] { return staging->host(1); });
  EXPECT_EQ(read.wait_for(30ms), std::future_status::timeout);  // copy held: host() must wait
  EXPECT_EQ(staging->host(0), nullptr);                          // not staged this backward
  gate.release();
  const float* values = read.get();
  ASSERT_NE(values, nullptr);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(values[i], 10.0f + i);
}

TEST_F(CopyStagingTest, BuffersAreReusedAndRestagedEachBackward) {
  gate.release();
  staging->begin_backward();
  staging->stage(0, filled(3, 1));
  const float* first = staging->host(0);
  staging->begin_backward();
  EXPECT_EQ(staging->host(0), nullptr);  // a new backward has not staged it yet
  staging->stage(0, filled(3, 7));
  const float* second = staging->host(0);
  EXPECT_EQ(first, second);  // one page-locked buffer per layer, taken once
  EXPECT_EQ(second[2], 9.0f);
  EXPECT_THROW(staging->stage(2, filled(1, 0)), std::out_of_range);
}

TEST_F(CopyStagingTest, ComputeStartsOnlyAfterTheParametersAreLoaded) {
  // Parameters, as a model's: leaves that require grad.
  std::vector<at::Tensor> params = {torch::zeros({3}, torch::requires_grad()), torch::zeros({5}, torch::requires_grad())};
  std::vector<std::vector<float>> values = {{1, 2, 3}, {4, 5, 6, 7, 8}};
  staging->load(values, params);
  values[0][0] = -1;  // the caller may reuse its vectors at once
  std::atomic<bool> ran{false};
  auto compute = std::async(std::launch::async, [&] {
    return staging->run_compute([&] {
      ran = true;
      EXPECT_EQ(params[0][0].item<float>(), 1.0f);
      EXPECT_EQ(params[1][4].item<float>(), 8.0f);
    });
  });
  EXPECT_EQ(compute.wait_for(30ms), std::future_status::timeout);
  EXPECT_FALSE(ran);
  gate.release();
  EXPECT_GE(compute.get(), 0.0);
  EXPECT_TRUE(ran);
  EXPECT_THROW(staging->load({{1, 2, 3}}, params), std::invalid_argument);
  EXPECT_THROW(staging->load({{1, 2}, {1, 2, 3, 4, 5}}, params), std::invalid_argument);
}

TEST(DirectStaging, ReadsGradientsInPlace) {
  std::vector<at::Tensor> params = {torch::zeros({2}, torch::requires_grad()), torch::zeros({3}, torch::requires_grad())};
  auto staging = make_direct_staging(params);
  (params[1].sum() * 2).backward();
  EXPECT_EQ(staging->host(0), nullptr);  // took no part in the loss
  EXPECT_EQ(staging->host(1), params[1].grad().data_ptr<float>());
  staging->load({{5, 6}, {7, 8, 9}}, params);
  EXPECT_EQ(params[1][2].item<float>(), 9.0f);
}

// Staged from inside autograd's gradient hooks, as LocalWorkers does, the
// host copies equal the gradients backward left in .grad().
TEST(CopyStagingInBackward, HookStagedGradientsEqualTheModelsOwn) {
  const auto model = model::make_model("cnn", {1, 28, 28, 10}, 3);
  const auto params = model.parameters();
  std::vector<std::size_t> numels;
  for (const auto& p : params) numels.push_back(static_cast<std::size_t>(p.numel()));
  auto staging = make_copy_staging(make_host_thread_copy_engine(), numels);
  model::GradientReadyHooks hooks(model, [&](std::size_t layer) { staging->stage(layer, params[layer].grad()); });
  data::SyntheticOptions options;
  options.train_size = 64;
  options.test_size = 16;
  const auto data = data::make_synthetic_dataset(options, data::Split::kTrain);
  staging->begin_backward();
  model::loss_and_backward(model, data->get_range(0, 16));
  const auto expected = model::flatten_gradients(model);
  std::size_t offset = 0;
  for (std::size_t l = 0; l < params.size(); ++l) {
    const float* host = staging->host(l);
    ASSERT_NE(host, nullptr) << l;
    for (std::size_t i = 0; i < numels[l]; ++i) ASSERT_EQ(host[i], expected[offset + i]) << l << " " << i;
    offset += numels[l];
  }
}

// On a CUDA build with a GPU (scripts/gpu/check.sh runs these there; a
// CPU-only build skips them): the CUDA copy engine moves gradients and
// parameters across exactly, and the engine trains on the GPU to the same
// model as on the CPU up to float rounding.
bool have_gpu() { return cuda_built() && cuda_device_count() > 0; }

TEST(CudaStaging, GradientsAndParametersCrossExactly) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device in this build or machine";
  const auto gpu = torch::TensorOptions().device(torch::kCUDA, 0);
  auto staging = make_copy_staging(make_cuda_copy_engine(0), {1000, 7});
  std::vector<at::Tensor> params = {torch::zeros({1000}, gpu.requires_grad(true)), torch::zeros({7}, gpu.requires_grad(true))};
  std::vector<std::vector<float>> values(2);
  for (int i = 0; i < 1000; ++i) values[0].push_back(0.5f * i);
  values[1].assign(7, -3.0f);
  staging->load(values, params);
  at::Tensor seen;
  EXPECT_GE(staging->run_compute([&] { seen = params[0] * 2; }), 0.0);
  EXPECT_EQ(seen[999].item<float>(), 999.0f);
  EXPECT_EQ(params[1][6].item<float>(), -3.0f);
  staging->begin_backward();
  const auto grad = torch::arange(1000, gpu.dtype(torch::kFloat).requires_grad(false)) * 3;
  staging->stage(0, grad);
  const float* host = staging->host(0);
  ASSERT_NE(host, nullptr);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(host[i], 3.0f * i);
  EXPECT_EQ(staging->host(1), nullptr);
}

// One column of a run's iterations.csv, by its header name.
std::vector<double> iterations_column(const std::string& dir, const std::string& name) {
  return st::testing::read_csv(dir + "/iterations.csv").numbers(name);
}

std::string fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / ("st-device-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

// The GPU's own times have columns of their own; on the CPU they stay 0
// (forward_ms/backward_ms are the measurement there).
TEST(IterationsCsv, DeviceTimesAreZeroOnTheCpu) {
  auto c = train::small_config("ddp");
  c.out_dir = fresh_dir("cpu-times");
  train::train_real(c);
  const auto device_forward = iterations_column(c.out_dir, "device_forward_ms");
  const auto forward = iterations_column(c.out_dir, "forward_ms");
  ASSERT_FALSE(device_forward.empty());
  for (double v : device_forward) EXPECT_EQ(v, 0.0);
  for (double v : iterations_column(c.out_dir, "device_backward_ms")) EXPECT_EQ(v, 0.0);
  EXPECT_GT(*std::max_element(forward.begin(), forward.end()), 0.0);
}

TEST(CudaTraining, SameModelAsOnTheCpuUpToRounding) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device in this build or machine";
  for (const char* system : {"ddp", "stellatrain"}) {
    auto cpu = train::small_config(system);
    auto cuda = cpu;
    cuda.compute_device = "cuda";
    cuda.out_dir = fresh_dir(std::string("cuda-") + system);
    const auto on_cpu = train::train_real(cpu);
    const auto on_gpu = train::train_real(cuda);
    if (std::string(system) == "ddp") {
      EXPECT_LT(train::max_relative_difference(on_gpu.final_parameters, on_cpu.final_parameters), 1e-3);
    }
    // Sparsification may pick a different entry where rounding moved a
    // value across the threshold: compare what the models learned instead.
    ASSERT_FALSE(on_cpu.evaluations.empty());
    ASSERT_FALSE(on_gpu.evaluations.empty());
    EXPECT_NEAR(on_gpu.evaluations.back().accuracy, on_cpu.evaluations.back().accuracy, 0.02) << system;
    // CUDA events timed every forward and backward.
    for (const char* column : {"device_forward_ms", "device_backward_ms"}) {
      const auto times = iterations_column(cuda.out_dir, column);
      ASSERT_FALSE(times.empty()) << column;
      for (double v : times) EXPECT_GT(v, 0.0) << system << " " << column;
    }
  }
}

// A TorchScript model of one's own (core/model/torchscript_model.h) moves to
// the GPU with its replica and trains there as on the CPU. The module is
// written here in TorchScript's own language, so the test needs no Python.
std::string save_tiny_script(const std::string& dir) {
  torch::manual_seed(7);
  torch::jit::Module m("TinyNet");
  m.register_parameter("w1", (torch::randn({32, 784}) * 0.05).requires_grad_(), false);
  m.register_parameter("b1", torch::zeros({32}).requires_grad_(), false);
  m.register_parameter("w2", (torch::randn({10, 32}) * 0.1).requires_grad_(), false);
  m.register_parameter("b2", torch::zeros({10}).requires_grad_(), false);
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.matmul(torch.flatten(x, 1), self.w1.t()) + self.b1)
    return torch.matmul(h, self.w2.t()) + self.b2
)");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/tiny-script.pt";
  m.save(path);
  return path;
}

TEST(CudaTraining, TorchScriptModelAsOnTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device in this build or machine";
  auto cpu = train::small_config("ddp");
  cpu.model = "tiny-script";
  cpu.model_file = save_tiny_script(fresh_dir("torchscript-model"));
  auto cuda = cpu;
  cuda.compute_device = "cuda";
  cuda.out_dir = fresh_dir("cuda-torchscript");
  const auto on_cpu = train::train_real(cpu);
  const auto on_gpu = train::train_real(cuda);
  EXPECT_LT(train::max_relative_difference(on_gpu.final_parameters, on_cpu.final_parameters), 1e-3);
  ASSERT_FALSE(on_gpu.evaluations.empty());
  EXPECT_NEAR(on_gpu.evaluations.back().accuracy, on_cpu.evaluations.back().accuracy, 0.02);
}

}  // namespace
}  // namespace st::device
