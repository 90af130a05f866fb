// TorchScript models of one's own (core/model/torchscript_model.h): the
// files scripts/byo/make_models.py writes load, train and time like zoo
// models; the scripted copy of the zoo's cnn is the zoo's cnn (the same
// parameters in the same order, the same arithmetic, the same per-layer
// gradient readiness, the same FLOPs); bad files are refused naming the
// file and the problem.
#include <gtest/gtest.h>

#include <torch/script.h>
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/model/flops.h"
#include "core/model/gradient_hooks.h"
#include "core/model/model.h"
#include "core/model/torchscript_model.h"

namespace st::model {
namespace {

namespace fs = std::filesystem;
const ModelShape kFashion{1, 28, 28, 10};

// The example models, made once per test process by the repository's script
// with Debian's python3-torch (scripts/install-deps.sh installs it), or with
// $ST_PYTHON where that is another Python with torch (a GPU machine's:
// scripts/gpu/build.sh's env.sh sets it).
const std::string& models_dir() {
  static const std::string dir = [] {
    const fs::path out = fs::temp_directory_path() / ("st-torchscript-test-" + std::to_string(::getpid()));
    const char* python = std::getenv("ST_PYTHON");
    const std::string command = std::string(python && *python ? python : "/usr/bin/python3") + " " ST_SOURCE_DIR "/scripts/byo/make_models.py --out " + out.string() +
                                " --input 1 28 28 --classes 10 > " + out.string() + ".log 2>&1";
    fs::create_directories(out);
    if (std::system(command.c_str()) != 0) {
      ADD_FAILURE() << "scripts/byo/make_models.py failed (needs /usr/bin/python3, or $ST_PYTHON, with torch): see " << out << ".log";
    }
    return out.string();
  }();
  return dir;
}

ModelSpec spec_of(const std::string& file) {
  ModelSpec spec;
  spec.name = "my-" + file;
  spec.torchscript = models_dir() + "/" + file + ".pt";
  return spec;
}

std::vector<std::size_t> readiness_order(const Model& m, const at::Tensor& images, const at::Tensor& labels) {
  std::vector<std::size_t> order;
  std::mutex mutex;
  GradientReadyHooks hooks(m, [&](std::size_t p) {
    std::lock_guard<std::mutex> lock(mutex);
    order.push_back(p);
  });
  m.zero_grad();
  torch::nn::functional::cross_entropy(m.forward(images), labels).backward();
  return order;
}

TEST(TorchScriptModel, TheScriptedCnnIsTheZoosCnn) {
  const Model zoo = make_model("cnn", kFashion, 3);
  const Model scripted = make_model(spec_of("cnn"), kFashion, 3);
  const auto a = zoo.named_parameters(), b = scripted.named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t p = 0; p < a.size(); ++p) {
    EXPECT_EQ(a[p].name, b[p].name);
    EXPECT_EQ(a[p].tensor.sizes(), b[p].tensor.sizes()) << a[p].name;
  }
  EXPECT_EQ(scripted.parameter_count(), 421642);
  {
    torch::NoGradGuard no_grad;
    for (std::size_t p = 0; p < a.size(); ++p) b[p].tensor.copy_(a[p].tensor);
  }
  torch::manual_seed(5);
  const auto images = torch::randn({8, 1, 28, 28});
  const auto labels = torch::randint(0, 10, {8}, torch::kLong);
  EXPECT_TRUE(torch::allclose(zoo.forward(images), scripted.forward(images), 1e-5, 1e-6));
  // Per-layer readiness: the same parameters become ready in the same order,
  // also on a thread that did not load the file, iteration after iteration
  // (the JIT's optimiser, left on there, fused the last layers' backward
  // from the second iteration on).
  const auto zoo_order = readiness_order(zoo, images, labels);
  EXPECT_EQ(zoo_order, readiness_order(scripted, images, labels));
  std::thread worker([&] {
    for (int iteration = 0; iteration < 4; ++iteration)
      EXPECT_EQ(zoo_order, readiness_order(scripted, images, labels)) << "iteration " << iteration;
  });
  worker.join();
  for (std::size_t p = 0; p < a.size(); ++p)
    EXPECT_TRUE(torch::allclose(a[p].tensor.grad(), b[p].tensor.grad(), 1e-4, 1e-6)) << a[p].name;
}

TEST(TorchScriptModel, MeasuredFlopsAreTheHandCountedOnes) {
  const auto counted = parameter_forward_flops("cnn", kFashion);
  const auto measured = parameter_forward_flops(spec_of("cnn"), kFashion);
  ASSERT_EQ(counted.size(), measured.size());
  for (std::size_t p = 0; p < counted.size(); ++p) {
    EXPECT_EQ(counted[p].name, measured[p].name);
    EXPECT_DOUBLE_EQ(counted[p].forward_flops, measured[p].forward_flops) << counted[p].name;
  }
  ModelSpec declared = spec_of("cnn");
  declared.forward_flops = 1e9;
  EXPECT_NEAR(forward_flops_per_sample(declared, kFashion), 1e9, 1);
  // The traced copy counts the same.
  EXPECT_DOUBLE_EQ(forward_flops_per_sample(spec_of("cnn-traced"), kFashion), forward_flops_per_sample("cnn", kFashion));
}

TEST(TorchScriptModel, ResNetAndTransformerTrainAndReportEveryLayer) {
  for (const char* file : {"resnet", "transformer"}) {
    const Model m = make_model(spec_of(file), kFashion, 1);
    const auto params = m.parameters();
    torch::manual_seed(1);
    const auto images = torch::randn({4, 1, 28, 28});
    const auto labels = torch::randint(0, 10, {4}, torch::kLong);
    auto order = readiness_order(m, images, labels);
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order.size(), params.size()) << file << ": every parameter's gradient is reported once";
    EXPECT_GT(forward_flops_per_sample(spec_of(file), kFashion), 1e6) << file;
    // A step of SGD lowers the loss on the batch it saw.
    const double before = torch::nn::functional::cross_entropy(m.forward(images), labels).item<double>();
    {
      torch::NoGradGuard no_grad;
      for (auto& p : m.parameters()) p.sub_(0.05 * p.grad());
    }
    EXPECT_LT(torch::nn::functional::cross_entropy(m.forward(images), labels).item<double>(), before) << file;
  }
  // BatchNorm's statistics are buffers of each replica.
  EXPECT_FALSE(make_model(spec_of("resnet"), kFashion, 1).named_buffers().empty());
}

TEST(TorchScriptModel, ReplicasAreIndependentCopiesOfTheFile) {
  const Model a = make_model(spec_of("transformer"), kFashion, 1);
  const Model b = make_model(spec_of("transformer"), kFashion, 2);  // the seed does not change the file's weights
  for (std::size_t p = 0; p < a.parameters().size(); ++p) {
    EXPECT_TRUE(torch::equal(a.parameters()[p], b.parameters()[p]));
    EXPECT_TRUE(a.parameters()[p].is_leaf());
  }
  {
    torch::NoGradGuard no_grad;
    a.parameters()[0].add_(1.0);
  }
  EXPECT_FALSE(torch::equal(a.parameters()[0], b.parameters()[0]));
  EXPECT_FALSE(torch::equal(a.parameters()[0], make_model(spec_of("transformer"), kFashion, 1).parameters()[0]));
}

// `run` throws std::invalid_argument holding every one of `parts`.
template <class Run>
void expect_refused(Run run, const std::vector<std::string>& parts) {
  try {
    run();
    ADD_FAILURE() << "accepted; expected an error with " << parts.front();
  } catch (const std::invalid_argument& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// A module written here in TorchScript's own language, saved to `name`.
std::string save_module(const std::string& name, const std::string& source, bool trainable = true,
                        at::ScalarType type = at::kFloat) {
  torch::jit::Module m("Bad");
  m.register_parameter("weight", torch::ones({10, 784}, type).requires_grad_(trainable && type == at::kFloat), false);
  m.define(source);
  const std::string path = models_dir() + "/" + name + ".pt";
  m.save(path);
  return path;
}

TEST(TorchScriptModel, BadFilesAreRefusedNamingTheFileAndTheProblem) {
  ModelSpec spec;
  spec.name = "bad";
  spec.torchscript = models_dir() + "/missing.pt";
  expect_refused([&] { make_model(spec, kFashion, 1); }, {spec.torchscript, "no such TorchScript file"});
  spec.torchscript = models_dir() + "/text.pt";
  { std::ofstream(spec.torchscript) << "not a model\n"; }
  expect_refused([&] { make_model(spec, kFashion, 1); }, {spec.torchscript, "not a TorchScript module"});

  const std::string linear = "def forward(self, x):\n  return x.flatten(1).matmul(self.weight.t())\n";
  spec.torchscript = save_module("wrong-classes", linear);
  expect_refused([&] { make_model(spec, {1, 28, 28, 5}, 1); }, {spec.torchscript, "gives [2, 10], expected [2, 5]"});
  expect_refused([&] { make_model(spec, {3, 28, 28, 10}, 1); }, {spec.torchscript, "forward of [2, 3, 28, 28] failed"});
  spec.torchscript = save_module("tuple", "def forward(self, x):\n  return (x, x)\n");
  expect_refused([&] { make_model(spec, kFashion, 1); }, {spec.torchscript, "not one tensor of logits"});
  spec.torchscript = save_module("frozen", linear, /*trainable=*/false);
  expect_refused([&] { make_model(spec, kFashion, 1); }, {spec.torchscript, "parameter weight does not require grad"});
  spec.torchscript = save_module("double", linear, true, at::kDouble);
  expect_refused([&] { make_model(spec, kFashion, 1); }, {spec.torchscript, "parameter weight is Double"});
  // What the scenario or the file declares is checked against the dataset.
  ModelSpec declared = spec_of("cnn");
  expect_refused([&] { make_model(declared, {1, 32, 32, 10}, 1); },
                 {declared.torchscript, "takes [1, 28, 28]", "images are [1, 32, 32]"});
  declared.classes = 7;
  expect_refused([&] { make_model(declared, kFashion, 1); }, {declared.torchscript, "7 classes but the dataset has 10"});
}

TEST(TorchScriptModel, TheFileSaysItsInputAndClasses) {
  const ModelSpec spec = with_file_metadata(spec_of("resnet"));
  EXPECT_EQ(spec.input, (std::vector<int64_t>{1, 28, 28}));
  EXPECT_EQ(spec.classes, 10);
  EXPECT_EQ(spec.forward_flops, 0);
}

}  // namespace
}  // namespace st::model
