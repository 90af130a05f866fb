#pragma once
// Fashion-MNIST from the IDX files that Debian's `dataset-fashion-mnist`
// package installs (/usr/share/datasets/fashion-mnist/*.gz), read directly
// with zlib. Torch-free header: Dataset types are only declared here.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace st::data {

class ImageDataset;
enum class Split;

inline constexpr const char* kFashionMnistPackage = "dataset-fashion-mnist";
inline constexpr const char* kFashionMnistSystemDir = "/usr/share/datasets/fashion-mnist";

// $ST_FASHION_MNIST_DIR when set, otherwise kFashionMnistSystemDir.
std::string default_fashion_mnist_dir();

// True when all four IDX files (gzipped or not) are present in `dir`.
bool fashion_mnist_available(const std::string& dir = default_fashion_mnist_dir());

// Loads one split: 60,000 (train) or 10,000 (test) 1x28x28 images, labels
// 0..9, normalized with the Fashion-MNIST mean 0.2860 and stddev 0.3530.
// Throws std::runtime_error naming the file and the problem: missing file
// (with the package to install), bad magic number, wrong dimensions,
// differing counts, out-of-range label, truncated or corrupt data.
std::unique_ptr<ImageDataset> load_fashion_mnist(Split split,
                                                 const std::string& dir = default_fashion_mnist_dir());

// An unsigned-byte IDX array: the dimensions from the header and the data.
struct IdxArray {
  std::vector<uint32_t> dims;
  std::vector<uint8_t> data;
};

// Reads an IDX file of unsigned bytes with `expected_rank` dimensions; the
// file may be gzip-compressed or plain (zlib reads both). Throws
// std::runtime_error naming `path` on any malformation.
IdxArray read_idx_file(const std::string& path, int expected_rank);

}  // namespace st::data
