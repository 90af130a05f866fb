// .npy / .npz files without LibTorch (core/data/npy.h, npz.h,
// npz_dataset_check.cc): headers as numpy writes them, round trips, and
// every bad file named by file and field.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/data/npz_dataset.h"
#include "tests/npz_test_util.h"

namespace st::data {
namespace {

using test::bytes_of;
using test::DatasetArrays;
using test::expect_error;
using test::temp_npz;

std::vector<uint8_t> header_bytes(const std::string& dict, int major = 1) {
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  const std::size_t length = dict.size();
  out.push_back(static_cast<uint8_t>(length & 0xff));
  out.push_back(static_cast<uint8_t>(length >> 8));
  if (major > 1) out.insert(out.end(), {0, 0});
  out.insert(out.end(), dict.begin(), dict.end());
  return out;
}

TEST(Npy, ReadsTheHeaderNumpyWrites) {
  // numpy 1.24: np.save of np.zeros((2, 3), '<f4'), header padded to 64 bytes.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" + std::string(11, ' ') + "\n";
  const auto bytes = header_bytes(dict);
  const NpyHeader h = parse_npy_header(bytes.data(), bytes.size(), "a.npy", "x");
  EXPECT_EQ(h.dtype.name(), "f4");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h.data_offset, bytes.size());
  EXPECT_EQ(h.data_bytes(), 24u);
}

TEST(Npy, ReadsScalarsOneDimensionalShapesAndVersionTwo) {
  auto scalar = header_bytes("{'descr': '|u1', 'fortran_order': False, 'shape': (), }\n");
  EXPECT_EQ(parse_npy_header(scalar.data(), scalar.size(), "f", "c").elements(), 1u);
  auto vector = header_bytes("{\"descr\": \"<i8\", \"shape\": (5,), \"fortran_order\": False}\n", 2);
  const NpyHeader h = parse_npy_header(vector.data(), vector.size(), "f", "y");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(h.dtype.name(), "i8");
}

TEST(Npy, RefusesWhatItCannotReadAndSaysWhy) {
  auto refuse = [](const std::string& dict, const std::string& why) {
    const auto bytes = header_bytes(dict);
    expect_error([&] { parse_npy_header(bytes.data(), bytes.size(), "d.npz", "x_train"); }, "d.npz", "x_train", why);
  };
  refuse("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", "big-endian");
  refuse("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", "Fortran-order");
  refuse("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "dtype '|O'");
  refuse("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", "dtype '<c8'");
  refuse("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", "non-negative integer");
  refuse("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", "larger than");
  refuse("{'descr': '<f4', 'fortran_order': False}", "lacks one of");
  refuse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unknown header key 'extra'");
  refuse("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) } trailing", "after the header");
  const std::vector<uint8_t> not_npy = {'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0};
  expect_error([&] { parse_npy_header(not_npy.data(), not_npy.size(), "d.npz", "x"); }, "d.npz", "x", "magic");
  auto cut = header_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }");
  cut.resize(cut.size() - 5);
  expect_error([&] { parse_npy_header(cut.data(), cut.size(), "d.npz", "x"); }, "d.npz", "x", "truncated");
}

TEST(Npy, RoundTripsEveryDtypeAndDecodesValues) {
  const std::vector<int16_t> values = {-3, 0, 7, 32767, -32768, 1};
  const auto bytes = npy_bytes(NpyDtype{'i', 2}, {2, 3}, values.data());
  EXPECT_EQ(bytes.size() % 64, 12u) << "header padded to 64 bytes, then 12 data bytes";
  const NpyArray a = parse_npy(bytes, "f", "a");
  EXPECT_EQ(a.header.shape, (std::vector<int64_t>{2, 3}));
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(a.integer(i), values[i]);
  const std::vector<double> doubles = {0.5, -1e300};
  EXPECT_EQ(parse_npy(npy_bytes(NpyDtype{'f', 8}, {2}, doubles.data()), "f", "d").value(1), -1e300);
  const uint64_t big = ~uint64_t{0};
  EXPECT_LT(parse_npy(npy_bytes(NpyDtype{'u', 8}, {1}, &big), "f", "u").integer(0), 0) << "callers range-check";
}

TEST(Npy, DataMustBeAsLongAsTheHeaderSays) {
  const std::vector<float> values(6, 1.0f);
  auto bytes = npy_bytes(NpyDtype{'f', 4}, {6}, values.data());
  auto longer = bytes;
  longer.push_back(0);
  expect_error([&] { parse_npy(longer, "d.npz", "x_test"); }, "d.npz", "x_test", "trailing bytes");
  bytes.pop_back();
  expect_error([&] { parse_npy(bytes, "d.npz", "x_test"); }, "d.npz", "x_test", "truncated");
}

TEST(Npz, WritesAndReadsBackEveryArray) {
  const std::vector<uint8_t> pixels = {1, 2, 3, 4};
  const std::vector<int64_t> labels = {0, 1};
  const std::string path = temp_npz("roundtrip");
  write_npz(path, {{"a", npy_bytes(NpyDtype{'u', 1}, {2, 2}, pixels.data())},
                   {"b", npy_bytes(NpyDtype{'i', 8}, {2}, labels.data())}});
  const NpzArchive archive = NpzArchive::open(path);
  EXPECT_EQ(archive.names(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(archive.read("a").data, pixels);
  EXPECT_EQ(archive.read("b").integer(1), 1);
  expect_error([&] { archive.read("c"); }, path, "c", "no array 'c' in the archive (it holds: a, b)");
  std::filesystem::remove(path);
}

TEST(Npz, NamesAMissingFileAndAFileThatIsNoArchive) {
  expect_error([] { NpzArchive::open("/nonexistent/d.npz"); }, "/nonexistent/d.npz", "", "no such file");
  const std::string text = temp_npz("text");
  { std::ofstream(text) << "not a zip\n"; }
  expect_error([&] { NpzArchive::open(text); }, text, "", "not a readable .npz");
  std::filesystem::remove(text);
  expect_error([] { NpzArchive::from_bytes({1, 2, 3}, "mem.npz"); }, "mem.npz", "", "not a readable .npz");
}

TEST(NpzDataset, DescribesAGoodFile) {
  DatasetArrays arrays;
  const std::string path = arrays.write("good");
  const NpzDatasetInfo info = describe_npz_dataset(path);
  EXPECT_EQ(info.channels, 1);
  EXPECT_EQ(info.height, 4);
  EXPECT_EQ(info.width, 3);
  EXPECT_EQ(info.classes, 3) << "max label + 1";
  EXPECT_EQ(info.train, 6u);
  EXPECT_EQ(info.validation, 0u);
  EXPECT_EQ(info.test, 3u);
  EXPECT_EQ(info.pixels.name(), "u1");
  std::filesystem::remove(path);
}

// Each bad file is refused with the file, the array (or element) and the
// reason in the message.
TEST(NpzDataset, EveryBadFileNamesTheFileAndTheField) {
  auto refused = [](const std::string& name, DatasetArrays arrays, const std::string& field, const std::string& why) {
    const std::string path = arrays.write(name);
    expect_error([&] { describe_npz_dataset(path); }, path, field, why);
    std::filesystem::remove(path);
  };
  DatasetArrays a;
  a.drop("y_test");
  refused("missing", a, "y_test", "missing");
  a = DatasetArrays{};
  a.set("x_train", NpyDtype{'i', 4}, {6, 4, 3}, std::vector<int32_t>(72, 1));
  refused("dtype", a, "x_train", "expected uint8 (u1) or float32 (f4)");
  a = DatasetArrays{};
  a.set("x_test", NpyDtype{'u', 1}, {3, 4}, std::vector<uint8_t>(12, 1));
  refused("rank", a, "x_test", "neither [N, H, W] nor [N, C, H, W]");
  a = DatasetArrays{};
  a.set("x_test", NpyDtype{'u', 1}, {3, 4, 4}, std::vector<uint8_t>(48, 1));
  refused("shape", a, "x_test", "images are 1x4x4 but x_train's are 1x4x3");
  a = DatasetArrays{};
  a.set("y_train", NpyDtype{'f', 4}, {6}, std::vector<float>(6, 0.0f));
  refused("label-dtype", a, "y_train", "expected an integer dtype");
  a = DatasetArrays{};
  a.set("y_train", NpyDtype{'i', 8}, {5}, std::vector<int64_t>(5, 0));
  refused("count", a, "y_train", "holds 5 labels but x_train holds 6 images");
  a = DatasetArrays{};
  a.set("y_train", NpyDtype{'i', 8}, {6}, std::vector<int64_t>{0, 1, 2, -1, 0, 1});
  refused("negative", a, "y_train[3]", "label -1 is outside");
  a = DatasetArrays{};
  const int32_t two = 2;
  a.set("classes", NpyDtype{'i', 4}, {}, std::vector<int32_t>{two});
  refused("classes", a, "y_train[2]", "label 2 is outside 0..1 (the file's 'classes')");
  a = DatasetArrays{};
  a.set("x_val", NpyDtype{'u', 1}, {2, 4, 3}, std::vector<uint8_t>(24, 0));
  refused("val-pair", a, "y_val", "x_val and y_val come together");
  a = DatasetArrays{};
  a.set("y_train", NpyDtype{'u', 1}, {6}, std::vector<uint8_t>(6, 0));
  a.set("y_test", NpyDtype{'u', 1}, {3}, std::vector<uint8_t>(3, 0));
  refused("one-class", a, "y_train", "at least two classes");
}

TEST(NpzDataset, ReadsASplitOfItsOwn) {
  DatasetArrays a;
  a.set("x_val", NpyDtype{'u', 1}, {2, 4, 3}, std::vector<uint8_t>(24, 9));
  a.set("y_val", NpyDtype{'i', 4}, {2}, std::vector<int32_t>{2, 0});
  const std::string path = a.write("val");
  EXPECT_EQ(describe_npz_dataset(path).validation, 2u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace st::data
