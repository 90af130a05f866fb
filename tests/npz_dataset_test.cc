// Dataset files as datasets (core/data/npz_dataset.h): batches, the
// normalisation, the validation split, float pixels, and a converted
// Fashion-MNIST that trains bit for bit as the built-in one.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/npz_dataset.h"
#include "tests/npz_test_util.h"

namespace st::data {
namespace {

using test::DatasetArrays;
using test::expect_error;

TEST(NpzDatasetLoad, BatchesAreNormalisedByTheTrainingSetsStatistics) {
  DatasetArrays a;
  const std::string path = a.write("load");
  NpzDatasets d = load_npz_datasets(path);
  ASSERT_TRUE(d.train && d.test);
  EXPECT_FALSE(d.validation);
  EXPECT_EQ(d.train->size(), 6u);
  EXPECT_EQ(d.train->classes(), 3);
  EXPECT_EQ(d.test->label(0), 2);
  // x_train's pixels are i * 7 for i < 72 (mod 256), in units of 1/255.
  double sum = 0, squares = 0;
  for (int i = 0; i < 72; ++i) {
    const double v = static_cast<uint8_t>(i * 7) / 255.0;
    sum += v, squares += v * v;
  }
  const double mean = sum / 72, stddev = std::sqrt(squares / 72 - mean * mean);
  const std::vector<std::size_t> all = {0, 1, 2, 3, 4, 5};
  const Batch b = d.train->get_batch(all);
  EXPECT_EQ(b.images.sizes(), (std::vector<int64_t>{6, 1, 4, 3}));
  EXPECT_NEAR(b.images.mean().item<double>(), 0.0, 1e-5);
  EXPECT_NEAR(b.images.std(/*unbiased=*/false).item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(b.images[0][0][0][1].item<float>(), (7 / 255.0 - mean) / stddev, 1e-5);
  EXPECT_EQ(b.labels[5].item<int64_t>(), 2);
  std::filesystem::remove(path);
}

TEST(NpzDatasetLoad, TakesTheFilesValidationSplitAndNormalisation) {
  DatasetArrays a;
  a.set("x_val", NpyDtype{'u', 1}, {2, 4, 3}, std::vector<uint8_t>(24, 51));
  a.set("y_val", NpyDtype{'i', 2}, {2}, std::vector<int16_t>{1, 0});
  a.set("mean", NpyDtype{'f', 4}, {1}, std::vector<float>{0.5f});
  a.set("std", NpyDtype{'f', 8}, {1}, std::vector<double>{0.25});
  const std::string path = a.write("val");
  NpzDatasets d = load_npz_datasets(path);
  ASSERT_TRUE(d.validation);
  EXPECT_EQ(d.validation->size(), 2u);
  EXPECT_EQ(d.validation->label(0), 1);
  const std::vector<std::size_t> first = {0};
  EXPECT_FLOAT_EQ(d.validation->get_batch(first).images[0][0][0][0].item<float>(), (51 / 255.0f - 0.5f) / 0.25f);
  std::filesystem::remove(path);
}

TEST(NpzDatasetLoad, FloatPixelsAndTheirErrors) {
  DatasetArrays a;
  std::vector<float> train(6 * 2 * 2 * 3, 0.0f), test(3 * 2 * 2 * 3, 1.0f);
  for (std::size_t i = 0; i < train.size(); ++i) train[i] = static_cast<float>(i % 5);
  a.set("x_train", NpyDtype{'f', 4}, {6, 2, 2, 3}, train);
  a.set("x_test", NpyDtype{'f', 4}, {3, 2, 2, 3}, test);
  const std::string path = a.write("float");
  NpzDatasets d = load_npz_datasets(path);
  EXPECT_EQ(d.train->image_shape().channels, 2);
  const std::vector<std::size_t> all = {0, 1, 2, 3, 4, 5};
  EXPECT_NEAR(d.train->get_batch(all).images.mean().item<double>(), 0.0, 1e-5);

  test[13] = std::numeric_limits<float>::quiet_NaN();
  a.set("x_test", NpyDtype{'f', 4}, {3, 2, 2, 3}, test);
  const std::string bad = a.write("nan");
  expect_error([&] { load_npz_datasets(bad); }, bad, "x_test[1]", "pixel 1 is nan");
  a.set("mean", NpyDtype{'f', 4}, {2}, std::vector<float>{0, 0});
  a.set("std", NpyDtype{'f', 4}, {2}, std::vector<float>{1, 0});
  a.set("x_test", NpyDtype{'f', 4}, {3, 2, 2, 3}, std::vector<float>(36, 1.0f));
  const std::string zero_std = a.write("zero-std");
  expect_error([&] { load_npz_datasets(zero_std); }, zero_std, "std", "channel 1: 0 is not a positive number");
  for (const auto& p : {path, bad, zero_std}) std::filesystem::remove(p);
}

// The converter's output (`stellatrain data convert`) is the built-in
// dataset, bit for bit: same pixels, labels and normalisation.
TEST(NpzDatasetLoad, ConvertedFashionMnistGivesTheBuiltInBatches) {
  if (!fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST is not installed";
  const auto train = load_fashion_mnist(Split::kTrain);
  const auto test = load_fashion_mnist(Split::kTest);
  const std::string path = test::temp_npz("fashion-mnist");
  write_npz_dataset(path, *train, *test);
  NpzDatasets d = load_npz_datasets(path);
  EXPECT_EQ(d.train->size(), train->size());
  EXPECT_EQ(d.test->size(), test->size());
  EXPECT_EQ(d.train->classes(), 10);
  const std::vector<std::size_t> some = {0, 1, 59999, 31337, 7};
  const Batch ours = d.train->get_batch(some), theirs = train->get_batch(some);
  EXPECT_TRUE(torch::equal(ours.images, theirs.images));
  EXPECT_TRUE(torch::equal(ours.labels, theirs.labels));
  const std::vector<std::size_t> test_some = {0, 9999, 4242};
  EXPECT_TRUE(torch::equal(d.test->get_batch(test_some).images, test->get_batch(test_some).images));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace st::data
