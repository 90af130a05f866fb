#include "core/data/cifar10.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/data/dataset.h"

namespace st::data {
namespace {

constexpr int64_t kClasses = 10;
constexpr std::size_t kImageBytes = kCifar10RecordBytes - 1;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::runtime_error(fmt::format("{}: {}", path, problem));
}

std::vector<uint8_t> read_whole_file(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    fail(path, "CIFAR-10 batch file not found (download cifar-10-binary.tar.gz from "
               "https://www.cs.toronto.edu/~kriz/cifar.html and unpack it, or set ST_CIFAR10_DIR)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  return bytes;
}

void check_record_layout(const std::vector<uint8_t>& bytes, const std::string& path) {
  if (bytes.empty()) fail(path, "empty file, expected 3073-byte CIFAR-10 records");
  if (bytes.size() % kCifar10RecordBytes != 0) {
    fail(path, fmt::format("size {} is not a multiple of the {}-byte record: record {} is "
                           "truncated ({} of {} bytes)",
                           bytes.size(), kCifar10RecordBytes, bytes.size() / kCifar10RecordBytes,
                           bytes.size() % kCifar10RecordBytes, kCifar10RecordBytes));
  }
}

// Splits records into labels and pixels, validating every label.
void append_records(const std::vector<uint8_t>& bytes, const std::string& path,
                    std::vector<uint8_t>& pixels, std::vector<uint8_t>& labels) {
  const std::size_t records = bytes.size() / kCifar10RecordBytes;
  for (std::size_t r = 0; r < records; ++r) {
    const uint8_t* record = bytes.data() + r * kCifar10RecordBytes;
    if (record[0] >= kClasses) {
      fail(path, fmt::format("record {} has label {}, expected 0..{}", r, record[0], kClasses - 1));
    }
    labels.push_back(record[0]);
    pixels.insert(pixels.end(), record + 1, record + 1 + kImageBytes);
  }
}

}  // namespace

std::string default_cifar10_dir() {
  const char* override_dir = std::getenv("ST_CIFAR10_DIR");
  return override_dir && *override_dir ? override_dir : "data/cifar-10-batches-bin";
}

std::vector<std::string> cifar10_files(Split split, const std::string& dir) {
  namespace fs = std::filesystem;
  if (split == Split::kTest) return {(fs::path(dir) / "test_batch.bin").string()};
  std::vector<std::string> files;
  for (int i = 1; i <= 5; ++i) files.push_back((fs::path(dir) / fmt::format("data_batch_{}.bin", i)).string());
  return files;
}

std::unique_ptr<ImageDataset> load_cifar10(Split split, const std::string& dir) {
  return read_cifar10_files(cifar10_files(split, dir), fmt::format("cifar10/{}", split_name(split)));
}

std::unique_ptr<ImageDataset> read_cifar10_files(const std::vector<std::string>& paths,
                                                 const std::string& dataset_name) {
  if (paths.empty()) throw std::invalid_argument(dataset_name + ": no CIFAR-10 batch files given");
  std::vector<uint8_t> pixels, labels;
  for (const std::string& path : paths) {
    const std::vector<uint8_t> bytes = read_whole_file(path);
    check_record_layout(bytes, path);
    append_records(bytes, path, pixels, labels);
  }
  return std::make_unique<ImageDataset>(
      dataset_name, ImageShape{3, 32, 32}, kClasses, std::move(pixels), std::move(labels),
      Normalization{{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}});
}

}  // namespace st::data
