// Model zoo, local training and real gradients.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/sampler.h"
#include "core/data/synthetic.h"
#include "core/model/local_training.h"
#include "core/model/model.h"
#include "core/model/real_gradient.h"

namespace st::model {
namespace {

// One LibTorch thread: ctest may run suites side by side and other builds
// share the two cores; OpenMP's spinning threads then slow a 2-thread run
// down several times, while one thread degrades gracefully (measured on the build machine).
class OneThread : public ::testing::Environment {
 public:
  void SetUp() override { at::set_num_threads(1); }
};
const auto* const kThreads = ::testing::AddGlobalTestEnvironment(new OneThread);

constexpr ModelShape kFashionShape{1, 28, 28, 10};
constexpr ModelShape kCifarShape{3, 32, 32, 10};

TEST(ModelZoo, ListsItsModels) {
  EXPECT_EQ(model_names(), (std::vector<std::string>{"mlp", "cnn", "resnet18", "vit", "resnet50", "resnet152",
                                                     "vit-b16"}));
}

// The ImageNet-sized models (resnet50, resnet152, vit-b16) are in model_zoo_test.cc.
TEST(ModelZoo, EverySmallModelGivesBatchByClassesLogits) {
  for (const std::string name : {"mlp", "cnn", "resnet18", "vit"}) {
    for (const ModelShape& shape : {kFashionShape, kCifarShape}) {
      SCOPED_TRACE(name + " channels " + std::to_string(shape.channels));
      const Model model = make_model(name, shape, 7);
      const at::Tensor logits = model.forward(at::randn({3, shape.channels, shape.height, shape.width}));
      EXPECT_EQ(logits.sizes(), (at::IntArrayRef{3, 10}));
      EXPECT_TRUE(logits.isfinite().all().item<bool>());
    }
  }
}

TEST(ModelZoo, ParameterCountsMatchTheReferenceModels) {
  EXPECT_EQ(make_model("mlp", kFashionShape).parameter_count(), 203530);  // 784-256-10
  EXPECT_EQ(make_model("cnn", kFashionShape).parameter_count(), 421642);  // the "422k CNN"
  EXPECT_EQ(make_model("mlp", kCifarShape).parameter_count(), 789258);
  EXPECT_EQ(make_model("cnn", kCifarShape).parameter_count(), 545098);
  EXPECT_EQ(make_model("resnet18", kCifarShape).parameter_count(), 11173962);
  EXPECT_EQ(make_model("resnet18", kFashionShape).parameter_count(), 11172810);
  EXPECT_EQ(make_model("vit", kFashionShape).parameter_count(), 306826);
  EXPECT_EQ(make_model("vit", kCifarShape).parameter_count(), 311338);
}

TEST(ModelZoo, ClassCountSetsTheOutputWidth) {
  const Model model = make_model("cnn", {1, 28, 28, 3});
  EXPECT_EQ(model.forward(at::randn({2, 1, 28, 28})).size(1), 3);
}

TEST(ModelZoo, UnknownNameListsTheKnownOnes) {
  try {
    make_model("alexnet", kFashionShape);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("alexnet"), std::string::npos) << message;
    for (const std::string& name : model_names()) EXPECT_NE(message.find(name), std::string::npos) << message;
  }
}

TEST(ModelZoo, RejectsShapesAModelCannotTake) {
  EXPECT_THROW(make_model("vit", {1, 30, 30, 10}), std::invalid_argument);
  EXPECT_THROW(make_model("mlp", {0, 28, 28, 10}), std::invalid_argument);
  EXPECT_THROW(make_model("cnn", {1, 28, 28, 1}), std::invalid_argument);
}

TEST(ModelZoo, ForwardRejectsAWrongInputShapeNamingTheModel) {
  const Model model = make_model("mlp", kFashionShape);
  try {
    model.forward(at::randn({2, 3, 32, 32}));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("mlp"), std::string::npos) << error.what();
  }
}

TEST(ModelZoo, SameInitSeedGivesSameParameters) {
  const Model a = make_model("cnn", kFashionShape, 42);
  const Model b = make_model("cnn", kFashionShape, 42);
  const Model c = make_model("cnn", kFashionShape, 43);
  const auto pa = a.parameters(), pb = b.parameters(), pc = c.parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_TRUE(pa[i].equal(pb[i])) << i;
  EXPECT_FALSE(pa[0].equal(pc[0]));
}

TEST(ModelZoo, NamedParametersFollowParameterOrder) {
  const Model model = make_model("resnet18", kCifarShape);
  const auto named = model.named_parameters();
  const auto plain = model.parameters();
  ASSERT_EQ(named.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) EXPECT_TRUE(named[i].tensor.is_same(plain[i])) << i;
  EXPECT_EQ(named.front().name, "conv1.weight");
  EXPECT_EQ(named.back().name, "fc.bias");
  EXPECT_FALSE(model.named_buffers().empty());  // BatchNorm running statistics
}

TEST(ModelZoo, TrainingModeSwitches) {
  const Model model = make_model("resnet18", kFashionShape);
  EXPECT_TRUE(model.is_training());
  model.set_training(false);
  EXPECT_FALSE(model.is_training());
}

TEST(LocalTraining, MlpLearnsSyntheticDataQuickly) {
  data::SyntheticOptions options;
  options.seed = 5;
  const auto train = data::make_synthetic_dataset(options, data::Split::kTrain);
  const auto test = data::make_synthetic_dataset(options, data::Split::kTest);
  const Model model = make_model("mlp", kFashionShape, 5);
  SgdTrainer trainer(model, {});
  data::BatchStream stream(data::ShardSampler(train->size(), 1, 0, 5));
  trainer.train(*train, stream, 40, 32);
  EXPECT_GE(evaluate(model, *test, 500).accuracy, 0.9);
}

TEST(LocalTraining, CnnBeatsChanceOnFashionMnist) {
  if (!data::fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  const auto start = std::chrono::steady_clock::now();
  const auto train = data::load_fashion_mnist(data::Split::kTrain);
  const auto test = data::load_fashion_mnist(data::Split::kTest);
  const Model model = make_model("cnn", kFashionShape, 1);
  SgdTrainer trainer(model, SgdSettings{0.01, 0.9, 0.0});
  data::BatchStream stream(data::ShardSampler(train->size(), 1, 0, 1));
  const double first_loss = trainer.train(*train, stream, 10, 64);
  const double later_loss = trainer.train(*train, stream, 140, 64);
  const Evaluation result = evaluate(model, *test, 1000);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("cnn, 150 steps of 64: loss %.3f -> %.3f, test accuracy %.1f%% on %zu images, %.1f s\n",
              first_loss, later_loss, 100 * result.accuracy, result.samples, seconds);
  EXPECT_LT(later_loss, first_loss);
  EXPECT_EQ(result.samples, 1000u);
  EXPECT_GE(result.accuracy, 0.70);  // chance is 0.10
}

TEST(LocalTraining, EvaluateRestoresTrainingMode) {
  data::SyntheticOptions options;
  options.test_size = 10;
  const auto test = data::make_synthetic_dataset(options, data::Split::kTest);
  const Model model = make_model("resnet18", kFashionShape);
  evaluate(model, *test);
  EXPECT_TRUE(model.is_training());
}

TEST(RealGradient, CnnIsDeterministicForASeedAndNonZero) {
  if (!fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  const std::vector<float> a = real_gradient("cnn", 2, 11);
  const std::vector<float> b = real_gradient("cnn", 2, 11);
  const std::vector<float> c = real_gradient("cnn", 2, 12);
  ASSERT_EQ(a.size(), 421642u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double norm = 0;
  for (float value : a) {
    ASSERT_TRUE(std::isfinite(value));
    norm += double(value) * value;
  }
  EXPECT_GT(norm, 0.0);
}

TEST(RealGradient, DescribesEachTensorsSlice) {
  RealGradientOptions options;
  options.model = "mlp";
  options.train_steps = 1;
  options.synthetic_fallback = true;  // runs with or without Fashion-MNIST
  const RealGradient gradient = compute_real_gradient(options);
  ASSERT_EQ(gradient.tensors.size(), 4u);
  EXPECT_EQ(gradient.tensors[0].name, "fc1.weight");
  EXPECT_EQ(gradient.tensors[0].shape, (std::vector<int64_t>{256, 784}));
  std::size_t offset = 0;
  for (const GradientTensor& tensor : gradient.tensors) {
    EXPECT_EQ(tensor.offset, offset) << tensor.name;
    offset += tensor.numel;
  }
  EXPECT_EQ(offset, gradient.values.size());
  EXPECT_EQ(gradient.data_source, fashion_mnist_available() ? "fashion-mnist" : "synthetic");
}

TEST(RealGradient, MissingDataIsAnErrorUnlessFallbackIsAsked) {
  RealGradientOptions options;
  options.model = "mlp";
  options.train_steps = 0;
  options.data_dir = "/nonexistent/fashion-mnist";
  try {
    compute_real_gradient(options);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("dataset-fashion-mnist"), std::string::npos) << error.what();
  }
  options.synthetic_fallback = true;
  EXPECT_EQ(compute_real_gradient(options).data_source, "synthetic");
}

TEST(RealGradient, RejectsBadArguments) {
  EXPECT_THROW(real_gradient("cnn", -1, 1), std::invalid_argument);
  EXPECT_THROW(real_gradient("cnn", 1, 1, 0), std::invalid_argument);
  RealGradientOptions options;
  options.model = "nope";
  options.synthetic_fallback = true;
  EXPECT_THROW(compute_real_gradient(options), std::invalid_argument);
}

}  // namespace
}  // namespace st::model
