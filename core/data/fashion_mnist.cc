#include "core/data/fashion_mnist.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "core/data/dataset.h"

namespace st::data {
namespace {

constexpr uint32_t kImageSide = 28;
constexpr uint32_t kClasses = 10;
constexpr uint8_t kUnsignedByteType = 0x08;
// Guards against absurd header values before allocating (Fashion-MNIST's
// training images are 47 MB).
constexpr uint64_t kMaxIdxBytes = uint64_t{1} << 31;

struct GzCloser {
  void operator()(gzFile_s* file) const { gzclose(file); }
};
using GzFile = std::unique_ptr<gzFile_s, GzCloser>;

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw std::runtime_error(fmt::format("{}: {}", path, problem));
}

// zlib's messages start with the path, which our errors already name.
std::string zlib_message(gzFile file, const std::string& path, int* code) {
  std::string message = gzerror(file, code);
  const std::string prefix = path + ": ";
  if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
  return message;
}

// Reads up to `size` bytes, in chunks because gzread takes an unsigned int.
// Returns the count read; throws on a zlib error (corrupt or cut-off stream).
uint64_t read_bytes(gzFile file, const std::string& path, uint8_t* out, uint64_t size) {
  uint64_t total = 0;
  int code = Z_OK;
  while (total < size) {
    const auto chunk = static_cast<unsigned>(std::min<uint64_t>(size - total, 1u << 20));
    const int got = gzread(file, out + total, chunk);
    if (got < 0) fail(path, "corrupt gzip data (" + zlib_message(file, path, &code) + ")");
    if (got == 0) break;
    total += static_cast<uint64_t>(got);
  }
  // A stream cut off mid-way reads short and leaves Z_BUF_ERROR behind.
  const std::string message = zlib_message(file, path, &code);
  if (code != Z_OK && code != Z_STREAM_END) fail(path, "truncated or corrupt gzip data (" + message + ")");
  return total;
}

uint32_t big_endian_u32(const uint8_t* bytes) {
  return (uint32_t{bytes[0]} << 24) | (uint32_t{bytes[1]} << 16) | (uint32_t{bytes[2]} << 8) |
         uint32_t{bytes[3]};
}

std::vector<uint32_t> read_header(gzFile file, const std::string& path, int expected_rank) {
  uint8_t magic[4];
  if (read_bytes(file, path, magic, 4) != 4) fail(path, "truncated: no complete IDX magic number");
  const uint32_t expected_magic = (uint32_t{kUnsignedByteType} << 8) | uint32_t(expected_rank);
  if (big_endian_u32(magic) != expected_magic) {
    fail(path, fmt::format("bad IDX magic number 0x{:08x} (expected 0x{:08x}: unsigned bytes, {} "
                           "dimension{})",
                           big_endian_u32(magic), expected_magic, expected_rank,
                           expected_rank == 1 ? "" : "s"));
  }
  std::vector<uint8_t> raw(4 * static_cast<std::size_t>(expected_rank));
  if (read_bytes(file, path, raw.data(), raw.size()) != raw.size()) {
    fail(path, "truncated: IDX header ends before its dimensions");
  }
  std::vector<uint32_t> dims(expected_rank);
  for (int i = 0; i < expected_rank; ++i) dims[i] = big_endian_u32(&raw[4 * i]);
  return dims;
}

uint64_t checked_element_count(const std::vector<uint32_t>& dims, const std::string& path) {
  uint64_t count = 1;
  for (uint32_t dim : dims) {
    if (dim == 0) fail(path, "IDX header has a zero dimension (empty file)");
    count *= dim;
    if (count > kMaxIdxBytes) fail(path, "IDX header dimensions are implausibly large");
  }
  return count;
}

// The .gz name as Debian installs it, else the gunzipped name; "" if neither.
std::string resolve_idx_path(const std::string& dir, const std::string& stem) {
  namespace fs = std::filesystem;
  const fs::path gz = fs::path(dir) / (stem + ".gz");
  if (fs::exists(gz)) return gz.string();
  const fs::path plain = fs::path(dir) / stem;
  if (fs::exists(plain)) return plain.string();
  return "";
}

std::string require_idx_path(const std::string& dir, const std::string& stem) {
  std::string path = resolve_idx_path(dir, stem);
  if (!path.empty()) return path;
  const std::string expected = (std::filesystem::path(dir) / (stem + ".gz")).string();
  const std::string why = std::filesystem::is_directory(dir) ? "" : " (no directory " + dir + ")";
  throw std::runtime_error(fmt::format(
      "Fashion-MNIST file {} not found{}; install the Debian package {} (apt-get install {}) or "
      "set ST_FASHION_MNIST_DIR to a directory holding the IDX files",
      expected, why, kFashionMnistPackage, kFashionMnistPackage));
}

const char* images_stem(Split split) {
  return split == Split::kTrain ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte";
}
const char* labels_stem(Split split) {
  return split == Split::kTrain ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte";
}

void check_image_dims(const IdxArray& images, const std::string& path) {
  if (images.dims[1] != kImageSide || images.dims[2] != kImageSide) {
    fail(path, fmt::format("images are {}x{}, expected {}x{}", images.dims[1], images.dims[2],
                           kImageSide, kImageSide));
  }
}

void check_labels(const IdxArray& labels, const std::string& path) {
  for (std::size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kClasses) {
      fail(path, fmt::format("label {} of item {} is outside 0..{}", labels.data[i], i, kClasses - 1));
    }
  }
}

}  // namespace

std::string default_fashion_mnist_dir() {
  const char* override_dir = std::getenv("ST_FASHION_MNIST_DIR");
  return override_dir && *override_dir ? override_dir : kFashionMnistSystemDir;
}

bool fashion_mnist_available(const std::string& dir) {
  for (Split split : {Split::kTrain, Split::kTest}) {
    if (resolve_idx_path(dir, images_stem(split)).empty()) return false;
    if (resolve_idx_path(dir, labels_stem(split)).empty()) return false;
  }
  return true;
}

IdxArray read_idx_file(const std::string& path, int expected_rank) {
  errno = 0;
  GzFile file(gzopen(path.c_str(), "rb"));
  if (!file) fail(path, fmt::format("cannot open ({})", errno ? std::strerror(errno) : "zlib"));
  IdxArray array;
  array.dims = read_header(file.get(), path, expected_rank);
  const uint64_t expected = checked_element_count(array.dims, path);
  array.data.resize(expected);
  const uint64_t got = read_bytes(file.get(), path, array.data.data(), expected);
  if (got != expected) {
    fail(path, fmt::format("truncated: header promises {} data bytes, file holds {}", expected, got));
  }
  uint8_t extra = 0;
  if (read_bytes(file.get(), path, &extra, 1) != 0) {
    fail(path, fmt::format("trailing bytes after the {} data bytes the header declares", expected));
  }
  return array;
}

std::unique_ptr<ImageDataset> load_fashion_mnist(Split split, const std::string& dir) {
  const std::string images_path = require_idx_path(dir, images_stem(split));
  const std::string labels_path = require_idx_path(dir, labels_stem(split));
  IdxArray images = read_idx_file(images_path, 3);
  IdxArray labels = read_idx_file(labels_path, 1);
  check_image_dims(images, images_path);
  if (images.dims[0] != labels.dims[0]) {
    fail(labels_path, fmt::format("holds {} labels but {} holds {} images", labels.dims[0],
                                  images_path, images.dims[0]));
  }
  check_labels(labels, labels_path);
  return std::make_unique<ImageDataset>(
      fmt::format("fashion-mnist/{}", split_name(split)), ImageShape{1, kImageSide, kImageSide},
      kClasses, std::move(images.data), std::move(labels.data),
      Normalization{{0.2860f}, {0.3530f}});
}

}  // namespace st::data
