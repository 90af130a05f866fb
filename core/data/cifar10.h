#pragma once
// CIFAR-10 in its binary distribution format (cifar-10-binary.tar.gz from
// https://www.cs.toronto.edu/~kriz/cifar.html, unpacked to
// cifar-10-batches-bin/): data_batch_1..5.bin and test_batch.bin, each a
// sequence of 3073-byte records: 1 label byte (0..9), then 1024 red, 1024
// green and 1024 blue pixel bytes (32x32, row-major). Torch-free header.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace st::data {

class ImageDataset;
enum class Split;

inline constexpr std::size_t kCifar10RecordBytes = 1 + 3 * 32 * 32;

// $ST_CIFAR10_DIR when set, otherwise "data/cifar-10-batches-bin".
std::string default_cifar10_dir();

// The batch files of one split, in order, under `dir`.
std::vector<std::string> cifar10_files(Split split, const std::string& dir);

// Loads one split (50,000 train / 10,000 test images, 3x32x32), normalized
// with the usual CIFAR-10 per-channel mean and stddev.
std::unique_ptr<ImageDataset> load_cifar10(Split split, const std::string& dir = default_cifar10_dir());

// Reads and concatenates the given batch files. Throws std::runtime_error
// naming the file (and record) when a file is missing or empty, its size is
// not a whole number of records, or a label is outside 0..9.
std::unique_ptr<ImageDataset> read_cifar10_files(const std::vector<std::string>& paths,
                                                 const std::string& dataset_name);

}  // namespace st::data
