#pragma once
// Helpers for the dataset-file tests (npz_test.cc, npz_dataset_test.cc): a
// small valid dataset file to break one array at a time, and a check that
// an error names the file, the field and the reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/data/npy.h"
#include "core/data/npz.h"

namespace st::data::test {

inline std::string temp_npz(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / ("st-npz-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / (name + ".npz")).string();
}

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// A valid file to start from: 6 train and 3 test images of 1x4x3 uint8
// pixels, labels 0..2 (uint8 train, int64 test).
struct DatasetArrays {
  struct Array {
    NpyDtype dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;
  };
  std::map<std::string, Array> arrays;

  DatasetArrays() {
    std::vector<uint8_t> train(6 * 12), test(3 * 12);
    for (std::size_t i = 0; i < train.size(); ++i) train[i] = static_cast<uint8_t>(i * 7);
    for (std::size_t i = 0; i < test.size(); ++i) test[i] = static_cast<uint8_t>(255 - i);
    set("x_train", NpyDtype{'u', 1}, {6, 4, 3}, train);
    set("y_train", NpyDtype{'u', 1}, {6}, std::vector<uint8_t>{0, 1, 2, 0, 1, 2});
    set("x_test", NpyDtype{'u', 1}, {3, 4, 3}, test);
    set("y_test", NpyDtype{'i', 8}, {3}, std::vector<int64_t>{2, 1, 0});
  }
  template <class T>
  void set(const std::string& name, NpyDtype dtype, std::vector<int64_t> shape, const std::vector<T>& values) {
    arrays[name] = Array{dtype, std::move(shape), bytes_of(values)};
  }
  void drop(const std::string& name) { arrays.erase(name); }
  std::string write(const std::string& name) const {
    const std::string path = temp_npz(name);
    std::vector<NpzEntry> entries;
    for (const auto& [key, a] : arrays) entries.push_back({key, npy_bytes(a.dtype, a.shape, a.data.data())});
    write_npz(path, entries);
    return path;
  }
};

// `run` throws a DatasetFileError for `file` and `field` whose message holds `why`.
template <class Run>
void expect_error(Run run, const std::string& file, const std::string& field, const std::string& why) {
  try {
    run();
    ADD_FAILURE() << "no error; expected one about " << field << ": " << why;
  } catch (const DatasetFileError& e) {
    EXPECT_EQ(e.file(), file) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
}

}  // namespace st::data::test
