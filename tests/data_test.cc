// Datasets (Fashion-MNIST IDX, CIFAR-10 binary, synthetic) and sharding.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>

#include "core/data/cifar10.h"
#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/random.h"
#include "core/data/sampler.h"
#include "core/data/synthetic.h"

namespace st::data {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("st-data-" + std::to_string(::getpid()) + "-" + test->test_suite_name() + "-" + test->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "(no exception)";
}

// --- IDX / Fashion-MNIST fixtures ---------------------------------------

std::vector<uint8_t> idx_bytes(uint32_t magic, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(v >> shift));
  };
  put(magic);
  for (uint32_t dim : dims) put(dim);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

void write_gz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(file);
}

std::vector<uint8_t> image_pixels(std::size_t count) {
  std::vector<uint8_t> pixels(count * 28 * 28);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i % 256);
  return pixels;
}

// A well-formed miniature Fashion-MNIST test split with `count` images.
void write_small_test_split(const TempDir& dir, uint32_t count) {
  std::vector<uint8_t> labels(count);
  for (uint32_t i = 0; i < count; ++i) labels[i] = static_cast<uint8_t>(i % 10);
  write_gz(dir.file("t10k-images-idx3-ubyte.gz"), idx_bytes(0x803, {count, 28, 28}, image_pixels(count)));
  write_gz(dir.file("t10k-labels-idx1-ubyte.gz"), idx_bytes(0x801, {count}, labels));
}

const ImageDataset& installed(Split split) {
  static const auto train = load_fashion_mnist(Split::kTrain);
  static const auto test = load_fashion_mnist(Split::kTest);
  return split == Split::kTrain ? *train : *test;
}

TEST(FashionMnist, LoadsTheInstalledPackage) {
  if (!fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  const ImageDataset& train = installed(Split::kTrain);
  const ImageDataset& test = installed(Split::kTest);
  EXPECT_EQ(train.size(), 60000u);
  EXPECT_EQ(test.size(), 10000u);
  EXPECT_EQ(train.name(), "fashion-mnist/train");
  std::vector<int> per_class(10, 0);
  for (std::size_t i = 0; i < test.size(); ++i) {
    const int64_t label = test.label(i);
    ASSERT_GE(label, 0);
    ASSERT_LE(label, 9);
    ++per_class[label];
  }
  EXPECT_EQ(per_class, std::vector<int>(10, 1000));  // the test split is balanced
}

TEST(FashionMnist, PixelsSpanTheByteRangeAndNormalize) {
  if (!fashion_mnist_available()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  const ImageDataset& train = installed(Split::kTrain);
  uint8_t lowest = 255, highest = 0;
  for (std::size_t i = 0; i < 1000; ++i) {
    for (uint8_t pixel : train.raw_pixels(i)) {
      lowest = std::min(lowest, pixel);
      highest = std::max(highest, pixel);
    }
  }
  EXPECT_EQ(lowest, 0);
  EXPECT_EQ(highest, 255);
  const Batch batch = train.get_range(0, 1000);
  EXPECT_EQ(batch.images.sizes(), (at::IntArrayRef{1000, 1, 28, 28}));
  EXPECT_EQ(batch.images.scalar_type(), at::kFloat);
  EXPECT_EQ(batch.labels.scalar_type(), at::kLong);
  EXPECT_NEAR(batch.images.min().item<float>(), -0.2860f / 0.3530f, 1e-4);
  EXPECT_NEAR(batch.images.max().item<float>(), (1 - 0.2860f) / 0.3530f, 1e-4);
  EXPECT_NEAR(batch.images.mean().item<float>(), 0.0f, 0.05);
  EXPECT_NEAR(batch.images.std().item<float>(), 1.0f, 0.05);
}

TEST(FashionMnist, ReadsASmallWellFormedDirectory) {
  TempDir dir;
  write_small_test_split(dir, 3);
  const auto test = load_fashion_mnist(Split::kTest, dir.str());
  ASSERT_EQ(test->size(), 3u);
  EXPECT_EQ(test->label(2), 2);
  EXPECT_EQ(test->raw_pixels(1)[0], (28 * 28) % 256);
  const Batch batch = test->get_batch(std::vector<std::size_t>{2, 0});
  EXPECT_EQ(batch.labels[0].item<int64_t>(), 2);
  EXPECT_NEAR(batch.images[1][0][0][1].item<float>(), (1 / 255.0f - 0.2860f) / 0.3530f, 1e-5);
}

TEST(FashionMnist, MissingDirectoryNamesTheFileAndThePackage) {
  const std::string message = error_of([] { load_fashion_mnist(Split::kTrain, "/nonexistent/fmnist"); });
  EXPECT_NE(message.find("/nonexistent/fmnist/train-images-idx3-ubyte.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("dataset-fashion-mnist"), std::string::npos) << message;
  EXPECT_FALSE(fashion_mnist_available("/nonexistent/fmnist"));
}

TEST(FashionMnist, MissingLabelFileIsNamed) {
  TempDir dir;
  write_small_test_split(dir, 3);
  fs::remove(dir.file("t10k-labels-idx1-ubyte.gz"));
  const std::string message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find("t10k-labels-idx1-ubyte.gz"), std::string::npos) << message;
  EXPECT_NE(message.find("dataset-fashion-mnist"), std::string::npos) << message;
}

TEST(FashionMnist, TruncatedGzipStreamNamesTheFile) {
  TempDir dir;
  write_small_test_split(dir, 20);
  const std::string images = dir.file("t10k-images-idx3-ubyte.gz");
  fs::resize_file(images, fs::file_size(images) / 2);
  const std::string message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find(images), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(FashionMnist, DataShorterThanTheHeaderSaysIsTruncated) {
  TempDir dir;
  const std::string path = dir.file("short.gz");
  write_gz(path, idx_bytes(0x803, {10, 28, 28}, image_pixels(5)));
  const std::string message = error_of([&] { read_idx_file(path, 3); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(FashionMnist, CorruptGzipDataNamesTheFile) {
  TempDir dir;
  write_small_test_split(dir, 20);
  const std::string images = dir.file("t10k-images-idx3-ubyte.gz");
  {
    std::fstream file(images, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(40);
    const char garbage[16] = {'\x13', '\x37', '\x42', '\x00', '\x7f', '\x7f', '\x01', '\x02',
                              '\x55', '\xaa', '\x55', '\xaa', '\x00', '\xff', '\x00', '\xff'};
    file.write(garbage, sizeof garbage);
  }
  const std::string message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find(images), std::string::npos) << message;
}

TEST(FashionMnist, BadMagicNumberIsReported) {
  TempDir dir;
  const std::string path = dir.file("labels.gz");
  write_gz(path, idx_bytes(0x803, {3}, {1, 2, 3}));  // image magic on a label file
  const std::string message = error_of([&] { read_idx_file(path, 1); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("magic"), std::string::npos) << message;
}

TEST(FashionMnist, TrailingBytesAreReported) {
  TempDir dir;
  const std::string path = dir.file("labels.gz");
  write_gz(path, idx_bytes(0x801, {2}, {1, 2, 3}));
  EXPECT_NE(error_of([&] { read_idx_file(path, 1); }).find("trailing"), std::string::npos);
}

TEST(FashionMnist, WrongImageSizeAndCountMismatchAndBadLabelsAreReported) {
  TempDir dir;
  write_small_test_split(dir, 3);
  const std::string images = dir.file("t10k-images-idx3-ubyte.gz");
  const std::string labels = dir.file("t10k-labels-idx1-ubyte.gz");

  write_gz(images, idx_bytes(0x803, {3, 32, 32}, std::vector<uint8_t>(3 * 32 * 32)));
  std::string message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find(images), std::string::npos) << message;
  EXPECT_NE(message.find("32x32"), std::string::npos) << message;

  write_gz(images, idx_bytes(0x803, {4, 28, 28}, image_pixels(4)));
  message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find(labels), std::string::npos) << message;
  EXPECT_NE(message.find("4 images"), std::string::npos) << message;

  write_gz(images, idx_bytes(0x803, {3, 28, 28}, image_pixels(3)));
  write_gz(labels, idx_bytes(0x801, {3}, {0, 10, 1}));
  message = error_of([&] { load_fashion_mnist(Split::kTest, dir.str()); });
  EXPECT_NE(message.find(labels), std::string::npos) << message;
  EXPECT_NE(message.find("label 10 of item 1"), std::string::npos) << message;
}

// --- CIFAR-10 -------------------------------------------------------------

std::vector<uint8_t> cifar_record(uint8_t label, uint8_t red, uint8_t green, uint8_t blue) {
  std::vector<uint8_t> record{label};
  for (uint8_t value : {red, green, blue}) record.insert(record.end(), 1024, value);
  return record;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_cifar_file(const std::string& path, const std::vector<std::vector<uint8_t>>& records) {
  std::vector<uint8_t> bytes;
  for (const auto& record : records) bytes.insert(bytes.end(), record.begin(), record.end());
  write_file(path, bytes);
}

TEST(Cifar10, ReadsRecordsAcrossFilesInChannelOrder) {
  TempDir dir;
  write_cifar_file(dir.file("a.bin"), {cifar_record(3, 255, 0, 0), cifar_record(9, 0, 255, 0)});
  write_cifar_file(dir.file("b.bin"), {cifar_record(0, 0, 0, 255)});
  const auto dataset = read_cifar10_files({dir.file("a.bin"), dir.file("b.bin")}, "tiny");
  ASSERT_EQ(dataset->size(), 3u);
  EXPECT_EQ(dataset->label(0), 3);
  EXPECT_EQ(dataset->label(1), 9);
  EXPECT_EQ(dataset->label(2), 0);
  const Batch batch = dataset->get_range(0, 3);
  EXPECT_EQ(batch.images.sizes(), (at::IntArrayRef{3, 3, 32, 32}));
  EXPECT_NEAR(batch.images[0][0][5][7].item<float>(), (1 - 0.4914f) / 0.2470f, 1e-4);  // red
  EXPECT_NEAR(batch.images[0][1][5][7].item<float>(), -0.4822f / 0.2435f, 1e-4);       // green
  EXPECT_NEAR(batch.images[2][2][31][31].item<float>(), (1 - 0.4465f) / 0.2616f, 1e-4);  // blue
}

TEST(Cifar10, LoadsASplitFromItsDirectory) {
  TempDir dir;
  for (int i = 1; i <= 5; ++i) write_cifar_file(dir.file("data_batch_" + std::to_string(i) + ".bin"), {cifar_record(i, 1, 2, 3)});
  write_cifar_file(dir.file("test_batch.bin"), {cifar_record(7, 1, 2, 3), cifar_record(8, 1, 2, 3)});
  const auto train = load_cifar10(Split::kTrain, dir.str());
  const auto test = load_cifar10(Split::kTest, dir.str());
  EXPECT_EQ(train->size(), 5u);
  EXPECT_EQ(train->label(4), 5);
  EXPECT_EQ(test->size(), 2u);
  EXPECT_EQ(test->name(), "cifar10/test");
}

TEST(Cifar10, WrongFileSizeNamesFileAndRecord) {
  TempDir dir;
  std::vector<uint8_t> bytes = cifar_record(1, 0, 0, 0);
  bytes.resize(kCifar10RecordBytes + 100, 0);
  write_file(dir.file("short.bin"), bytes);
  const std::string message = error_of([&] { read_cifar10_files({dir.file("short.bin")}, "x"); });
  EXPECT_NE(message.find(dir.file("short.bin")), std::string::npos) << message;
  EXPECT_NE(message.find("record 1 is truncated"), std::string::npos) << message;

  write_file(dir.file("empty.bin"), {});
  EXPECT_NE(error_of([&] { read_cifar10_files({dir.file("empty.bin")}, "x"); }).find("empty"), std::string::npos);
}

TEST(Cifar10, BadLabelNamesFileAndRecord) {
  TempDir dir;
  write_cifar_file(dir.file("bad.bin"), {cifar_record(1, 0, 0, 0), cifar_record(1, 0, 0, 0), cifar_record(10, 0, 0, 0)});
  const std::string message = error_of([&] { read_cifar10_files({dir.file("bad.bin")}, "x"); });
  EXPECT_NE(message.find(dir.file("bad.bin")), std::string::npos) << message;
  EXPECT_NE(message.find("record 2 has label 10"), std::string::npos) << message;
}

TEST(Cifar10, MissingFileIsNamed) {
  const std::string message = error_of([] { load_cifar10(Split::kTest, "/nonexistent/cifar"); });
  EXPECT_NE(message.find("/nonexistent/cifar/test_batch.bin"), std::string::npos) << message;
}

// --- Synthetic --------------------------------------------------------------

TEST(Synthetic, SameSeedSameSamplesIndependentOfBatching) {
  SyntheticOptions options;
  options.seed = 9;
  const auto a = make_synthetic_dataset(options, Split::kTrain);
  const auto b = make_synthetic_dataset(options, Split::kTrain);
  const Batch pair = a->get_batch(std::vector<std::size_t>{17, 4});
  const Batch single = b->get_batch(std::vector<std::size_t>{4});
  EXPECT_TRUE(pair.images[1].equal(single.images[0]));
  EXPECT_EQ(pair.labels[0].item<int64_t>(), a->label(17));
  EXPECT_TRUE(a->get_range(0, 50).images.equal(b->get_range(0, 50).images));
}

TEST(Synthetic, SeedAndSplitChangeTheSamples) {
  SyntheticOptions options;
  const auto train = make_synthetic_dataset(options, Split::kTrain);
  const auto test = make_synthetic_dataset(options, Split::kTest);
  options.seed = 2;
  const auto other = make_synthetic_dataset(options, Split::kTrain);
  const Batch base = train->get_range(0, 8);
  EXPECT_FALSE(base.images.equal(test->get_range(0, 8).images));
  EXPECT_FALSE(base.images.equal(other->get_range(0, 8).images));
}

// Prototypes are one stream, class after class, each made when its class is
// first asked for. Without noise a sample is its class's prototype, and with
// one pixel per image class c's prototype is the stream's draw c, with two
// pixels draws 2c and 2c+1: the lazily made prototypes must agree across
// layouts and whatever order classes are asked in.
TEST(Synthetic, LazyPrototypesContinueOneStreamClassAfterClass) {
  SyntheticOptions options;
  options.noise = 0;
  options.classes = 8;
  options.height = options.width = 1;
  const auto one_pixel = make_synthetic_dataset(options, Split::kTrain);
  options.width = 2;
  const auto two_pixels = make_synthetic_dataset(options, Split::kTrain);
  // Each class's prototype, asking for samples from the last index down.
  auto prototypes = [](const Dataset& d, int64_t pixels) {
    std::vector<std::vector<float>> out(8);
    for (std::size_t i = 400; i-- > 0;) {
      const Batch b = d.get_batch(std::vector<std::size_t>{i});
      auto& p = out[static_cast<std::size_t>(b.labels[0].item<int64_t>())];
      if (p.empty()) p.assign(b.images.data_ptr<float>(), b.images.data_ptr<float>() + pixels);
    }
    return out;
  };
  const auto one = prototypes(*one_pixel, 1), two = prototypes(*two_pixels, 2);
  for (std::size_t c = 0; c < 8; ++c) ASSERT_FALSE(one[c].empty() || two[c].empty()) << "no sample of class " << c;
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_EQ(two[c][0], one[2 * c][0]) << "class " << c;
    EXPECT_EQ(two[c][1], one[2 * c + 1][0]) << "class " << c;
  }
  EXPECT_NE(one[0][0], one[1][0]);
}

TEST(SplitMix64, DiscardSkipsDrawsAndANormalTakesTwo) {
  SplitMix64 a(42), b(42);
  a.discard(5);
  for (int i = 0; i < 5; ++i) b.next();
  EXPECT_EQ(a.next(), b.next());
  a.normal();
  b.discard(SplitMix64::kDrawsPerNormal);
  EXPECT_EQ(a.next(), b.next());
}

TEST(Synthetic, HonoursShapeClassesAndSize) {
  SyntheticOptions options;
  options.channels = 3;
  options.height = 32;
  options.width = 32;
  options.classes = 4;
  options.train_size = 1000;
  const auto dataset = make_synthetic_dataset(options, Split::kTrain);
  EXPECT_EQ(dataset->size(), 1000u);
  const Batch batch = dataset->get_range(0, 400);
  EXPECT_EQ(batch.images.sizes(), (at::IntArrayRef{400, 3, 32, 32}));
  EXPECT_EQ(batch.labels.min().item<int64_t>(), 0);
  EXPECT_EQ(batch.labels.max().item<int64_t>(), 3);
  EXPECT_THROW(dataset->get_batch(std::vector<std::size_t>{1000}), std::out_of_range);
  options.classes = 1;
  EXPECT_THROW(make_synthetic_dataset(options, Split::kTrain), std::invalid_argument);
}

// --- Sharding ---------------------------------------------------------------

TEST(ShardSampler, ShardsAreDisjointCoveringAndBalanced) {
  constexpr std::size_t kSize = 1003;
  constexpr int kWorld = 4;
  for (uint64_t epoch : {0u, 1u}) {
    std::multiset<std::size_t> seen;
    for (int rank = 0; rank < kWorld; ++rank) {
      const auto shard = ShardSampler(kSize, kWorld, rank, 77).epoch_indices(epoch);
      EXPECT_GE(shard.size(), kSize / kWorld);
      EXPECT_LE(shard.size(), kSize / kWorld + 1);
      seen.insert(shard.begin(), shard.end());
    }
    ASSERT_EQ(seen.size(), kSize);
    std::size_t expected = 0;
    for (std::size_t index : seen) EXPECT_EQ(index, expected++);  // each index exactly once
  }
}

TEST(ShardSampler, SeededPerEpochAndIdenticalAcrossInstances) {
  const ShardSampler sampler(500, 2, 1, 3);
  EXPECT_EQ(sampler.epoch_indices(0), ShardSampler(500, 2, 1, 3).epoch_indices(0));
  EXPECT_NE(sampler.epoch_indices(0), sampler.epoch_indices(1));
  EXPECT_NE(sampler.epoch_indices(0), ShardSampler(500, 2, 1, 4).epoch_indices(0));
}

TEST(ShardSampler, RejectsBadRanks) {
  EXPECT_THROW(ShardSampler(10, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(ShardSampler(10, 2, 2, 1), std::invalid_argument);
  EXPECT_THROW(ShardSampler(10, 2, -1, 1), std::invalid_argument);
  EXPECT_THROW(ShardSampler(1, 2, 0, 1), std::invalid_argument);
}

TEST(BatchStream, DropsTheRemainderAndMovesToTheNextEpoch) {
  BatchStream stream(ShardSampler(10, 1, 0, 5));
  const auto first = stream.next(4);
  const auto second = stream.next(4);
  EXPECT_EQ(stream.epoch(), 0u);
  const auto third = stream.next(4);  // only 2 left in epoch 0: they are skipped
  EXPECT_EQ(stream.epoch(), 1u);
  EXPECT_EQ(stream.position(), 4u);
  const auto epoch1 = ShardSampler(10, 1, 0, 5).epoch_indices(1);
  EXPECT_EQ(third, std::vector<std::size_t>(epoch1.begin(), epoch1.begin() + 4));
  std::set<std::size_t> distinct(first.begin(), first.end());
  distinct.insert(second.begin(), second.end());
  EXPECT_EQ(distinct.size(), 8u);
  EXPECT_THROW(stream.next(11), std::invalid_argument);
  EXPECT_THROW(stream.next(0), std::invalid_argument);
}

}  // namespace
}  // namespace st::data

namespace st::data {
namespace {

// Tuning never sees the test set: a tenth of the training set is held out
// as the validation set, the same samples in every run, never trained on.
TEST(Validation, ATenthOfTheTrainingSetHeldOutTheSameEveryTime) {
  SyntheticOptions options;
  auto parts = carve_validation(make_synthetic_dataset(options, Split::kTrain));
  auto again = carve_validation(make_synthetic_dataset(options, Split::kTrain));
  const std::size_t total = parts.train->size() + parts.validation->size();
  EXPECT_EQ(parts.validation->size(), total / 10);
  ASSERT_EQ(parts.validation->size(), again.validation->size());
  for (std::size_t i = 0; i < parts.validation->size(); i += 97)
    EXPECT_EQ(parts.validation->label(i), again.validation->label(i));
  // Disjoint: a validation image is not among the training images.
  const auto probe = parts.validation->get_range(0, 1).images;
  bool seen = false;
  for (std::size_t i = 0; i < parts.train->size() && !seen; i += 256) {
    const auto batch = parts.train->get_range(i, std::min<std::size_t>(256, parts.train->size() - i)).images;
    seen = (batch - probe).abs().flatten(1).sum(1).eq(0).any().item<bool>();
  }
  EXPECT_FALSE(seen);
  EXPECT_NE(parts.validation->name().find("validation"), std::string::npos);
  EXPECT_THROW(parts.validation->label(parts.validation->size()), std::out_of_range);
}

}  // namespace
}  // namespace st::data
