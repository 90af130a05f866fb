// The paper-scale models (resnet50, resnet152, vit-b16) and the per-parameter
// forward FLOPs of every zoo model. Part of the model_test binary, whose
// environment runs LibTorch on one thread.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/model/flops.h"
#include "core/model/model.h"

namespace st::model {
namespace {

constexpr ModelShape kImageNet100{3, 224, 224, 100};  // ImageNet-100 at the usual crop
constexpr ModelShape kFashionShape{1, 28, 28, 10};
constexpr ModelShape kCifarShape{3, 32, 32, 10};

const std::vector<std::string> kSmallModels{"mlp", "cnn", "resnet18", "vit"};

struct PaperModel {
  const char* name;
  int64_t parameters;      // torchvision's model with num_classes=100
  double published_gmacs;  // the usual per-image figure at 224x224 (1000 classes)
  double hook_flops;       // 2 x MACs from forward hooks on the same net built with torch.nn
};

const PaperModel kPaperModels[] = {
    {"resnet50", 23712932, 4.1, 8174682112},
    {"resnet152", 58348708, 11.5, 23023566848},
    {"vit-b16", 85875556, 17.6, 35126274048},
};

// Names the parameter in test names and failure messages (gtest would dump its bytes).
void PrintTo(const PaperModel& model, std::ostream* out) { *out << model.name; }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// parameter_forward_flops lists the model's parameters by name, in
// registration order; products sit on weights, elementwise work counts 0.
void expect_flops_follow_parameters(const Model& model) {
  const std::vector<ParameterFlops> flops = parameter_forward_flops(model.name(), model.shape());
  const std::vector<NamedTensor> parameters = model.named_parameters();
  ASSERT_EQ(flops.size(), parameters.size());
  double sum = 0;
  for (std::size_t i = 0; i < flops.size(); ++i) {
    const NamedTensor& parameter = parameters[i];
    EXPECT_EQ(flops[i].name, parameter.name) << i;
    const bool is_product_weight = parameter.tensor.dim() >= 2 && parameter.name.size() > 7 &&
                                   parameter.name.compare(parameter.name.size() - 7, 7, ".weight") == 0;
    if (is_product_weight) {
      EXPECT_GT(flops[i].forward_flops, 0) << parameter.name;
    } else {
      EXPECT_EQ(flops[i].forward_flops, 0) << parameter.name;
    }
    sum += flops[i].forward_flops;
  }
  EXPECT_DOUBLE_EQ(sum, forward_flops_per_sample(model.name(), model.shape()));
}

void expect_refused_naming(const std::string& model, const ModelShape& shape) {
  SCOPED_TRACE(model + " " + std::to_string(shape.height) + "x" + std::to_string(shape.width));
  for (const auto& attempt : {+[](const std::string& m, const ModelShape& s) { make_model(m, s); },
                              +[](const std::string& m, const ModelShape& s) { parameter_forward_flops(m, s); }}) {
    try {
      attempt(model, shape);
      ADD_FAILURE() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& error) {
      EXPECT_NE(std::string(error.what()).find("'" + model + "'"), std::string::npos) << error.what();
    }
  }
}

class PaperScaleModel : public ::testing::TestWithParam<PaperModel> {};

// One build and one batch-1 forward per model: those are the slow part.
TEST_P(PaperScaleModel, MatchesTorchvisionAndGivesLogits) {
  const PaperModel& expected = GetParam();
  auto start = std::chrono::steady_clock::now();
  const Model model = make_model(expected.name, kImageNet100, 1);
  const double build_s = seconds_since(start);
  EXPECT_EQ(model.parameter_count(), expected.parameters);
  expect_flops_follow_parameters(model);

  model.set_training(false);
  c10::NoGradGuard no_grad;
  start = std::chrono::steady_clock::now();
  const at::Tensor logits = model.forward(at::randn({1, 3, 224, 224}));
  const double forward_s = seconds_since(start);
  EXPECT_EQ(logits.sizes(), (at::IntArrayRef{1, 100}));
  EXPECT_TRUE(logits.isfinite().all().item<bool>());
  std::printf("%s: %lld parameters, %.3f GFLOPs/sample; build %.2f s, batch-1 forward %.2f s (1 thread)\n",
              expected.name, static_cast<long long>(model.parameter_count()),
              forward_flops_per_sample(expected.name, kImageNet100) / 1e9, build_s, forward_s);
}

INSTANTIATE_TEST_SUITE_P(ImageNet100, PaperScaleModel, ::testing::ValuesIn(kPaperModels),
                         [](const auto& info) {
                           std::string name = info.param.name;
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST(PaperScaleFlops, MatchPublishedFiguresAt224) {
  for (const PaperModel& model : kPaperModels) {
    const double flops = forward_flops_per_sample(model.name, kImageNet100);
    EXPECT_NEAR(flops / (2e9 * model.published_gmacs), 1.0, 0.05) << model.name;
    EXPECT_EQ(flops, model.hook_flops) << model.name;
  }
}

TEST(PaperScaleShapes, AreRefusedNamingTheModel) {
  expect_refused_naming("vit-b16", {3, 220, 224, 100});  // not whole 16x16 patches
  expect_refused_naming("vit-b16", {3, 224, 230, 100});
  expect_refused_naming("resnet50", {3, 28, 28, 10});  // below 32x32
  expect_refused_naming("resnet152", {3, 224, 16, 100});
  expect_refused_naming("resnet50", {3, 224, 224, 1});  // one class
}

TEST(ParameterFlops, FollowNamedParametersOfTheSmallModels) {
  for (const std::string& name : kSmallModels) {
    for (const ModelShape& shape : {kFashionShape, kCifarShape}) {
      SCOPED_TRACE(name + " channels " + std::to_string(shape.channels));
      expect_flops_follow_parameters(make_model(name, shape, 1));
    }
  }
}

TEST(ParameterFlops, CoverEveryZooModel) {
  std::vector<std::string> covered = kSmallModels;
  for (const PaperModel& model : kPaperModels) covered.emplace_back(model.name);
  EXPECT_EQ(model_names(), covered);  // each is checked above, small or paper-scale
}

TEST(ParameterFlops, KeepTheHandCountOfTheCnn) {
  // conv1 2*1*32*9*28*28 + conv2 2*32*64*9*14*14 + fc1 2*3136*128 + fc2 2*128*10
  EXPECT_EQ(forward_flops_per_sample("cnn", kFashionShape), 451584.0 + 7225344 + 802816 + 2560);
  const std::vector<ParameterFlops> flops = parameter_forward_flops("cnn", kFashionShape);
  ASSERT_EQ(flops.size(), 8u);
  EXPECT_EQ(flops[2].name, "conv2.weight");
  EXPECT_EQ(flops[2].forward_flops, 7225344.0);
}

TEST(ParameterFlops, ChargeAttentionProductsToQkv) {
  const std::vector<ParameterFlops> flops = parameter_forward_flops("vit", kFashionShape);
  const auto qkv = std::find_if(flops.begin(), flops.end(),
                                [](const ParameterFlops& entry) { return entry.name == "block0.attn.qkv.weight"; });
  ASSERT_NE(qkv, flops.end());
  // 49 patches + the class token, dim 96: the qkv product, then scores and weighted sum.
  const double tokens = 50, dim = 96;
  EXPECT_EQ(qkv->forward_flops, 2 * tokens * dim * 3 * dim + 2 * (2 * tokens * tokens * dim));
}

TEST(ParameterFlops, UnknownModelIsAnError) {
  EXPECT_THROW(parameter_forward_flops("alexnet", kCifarShape), std::invalid_argument);
  EXPECT_THROW(forward_flops_per_sample("alexnet", kCifarShape), std::invalid_argument);
}

}  // namespace
}  // namespace st::model
