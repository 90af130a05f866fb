// The dataset-file reader (core/data/npz.h, npy.h, npz_dataset_check.cc) on
// arbitrary bytes: a zip archive of .npy arrays. Bad input must come back
// as a DatasetFileError naming the file and the array; an archive it
// accepts must hold together (every array reads whole, and a file that
// passes the dataset checks has the shapes it reported).
#include "core/data/npz_dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  using namespace st::data;
  try {
    NpzArchive archive = NpzArchive::from_bytes(std::vector<uint8_t>(data, data + size), "fuzz.npz");
    for (const std::string& name : archive.names()) {
      try {
        const NpyArray array = archive.read(name);
        if (array.data.size() != array.header.data_bytes()) __builtin_trap();
      } catch (const DatasetFileError&) {
      }
    }
    const CheckedNpzDataset checked = check_npz_dataset(std::move(archive));
    if (checked.train_labels.size() != checked.info.train || checked.test_labels.size() != checked.info.test)
      __builtin_trap();
    for (const int32_t label : checked.train_labels)
      if (label < 0 || label >= checked.info.classes) __builtin_trap();
  } catch (const DatasetFileError&) {
  }
  return 0;
}
