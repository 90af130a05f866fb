#pragma once
// Any image-classification dataset as one NumPy .npz file (docs/byo.md):
//
//   x_train, y_train    required: images and labels the model trains on
//   x_test,  y_test     required: what runs are evaluated on
//   x_val,   y_val      optional, both or neither: the tuning split; without
//                       them a fixed tenth of x_train is held out
//                       (carve_validation, core/data/dataset.h)
//   classes             optional integer scalar; else max label + 1
//   mean, std           optional float arrays, one value per channel; else
//                       x_train's per-channel statistics
//
// Images are [N, C, H, W] or [N, H, W] (one channel), C order, uint8
// (pixels 0..255, normalised as (x / 255 - mean) / std, as the built-in
// datasets are) or float32 (normalised as (x - mean) / std). Labels are
// one-dimensional integers of any width, in 0..classes-1. Every split has
// the same image shape and dtype. Every violation is a DatasetFileError
// naming the file and the array (and the element, for a bad label or a
// non-finite pixel). Torch-free header.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/data/npz.h"

namespace st::data {

class Dataset;
class ImageDataset;

// The arrays of one split, and the split's name in datasets' names.
struct NpzSplitNames {
  const char* x;
  const char* y;
  const char* label;
};
inline constexpr NpzSplitNames kNpzTrain{"x_train", "y_train", "train"};
inline constexpr NpzSplitNames kNpzValidation{"x_val", "y_val", "validation"};
inline constexpr NpzSplitNames kNpzTest{"x_test", "y_test", "test"};

struct NpzDatasetInfo {
  int64_t channels = 0, height = 0, width = 0;
  int64_t classes = 0;
  NpyDtype pixels;
  uint64_t train = 0, validation = 0, test = 0;  // samples; validation 0 when the file has none
};

// A file after every check but its pixel values: arrays present, shapes,
// dtypes, labels in range (core/data/npz_dataset_check.cc, torch-free).
struct CheckedNpzDataset {
  NpzArchive archive;
  NpzDatasetInfo info;
  std::vector<int32_t> train_labels, validation_labels, test_labels;
};
CheckedNpzDataset check_npz_dataset(NpzArchive archive);

// The same from a path, keeping only what it found (what pricing and the
// scenario's checks need).
NpzDatasetInfo describe_npz_dataset(const std::string& path);

struct NpzDatasets {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> validation;  // null when the file has no x_val
  std::unique_ptr<Dataset> test;
};

// Loads every split (and checks float pixels are finite).
NpzDatasets load_npz_datasets(const std::string& path);

// Writes a dataset file from two 8-bit datasets in memory (the converter's
// output): pixels as uint8 [N, C, H, W], labels as uint8 when classes <=
// 256 (else int32), and train's normalisation as mean / std, so that the
// file trains bit for bit as its source does. Without x_val: the tuning
// split is carved from x_train as it is for the source.
void write_npz_dataset(const std::string& path, const ImageDataset& train, const ImageDataset& test);

}  // namespace st::data
