#pragma once
// NumPy's .npz archives (numpy.savez / savez_compressed): a zip file with
// one NAME.npy member per array, stored or deflated, zip64 as numpy writes
// it. The zip side is libzip's (Debian's libzip-dev), the .npy side
// core/data/npy.h. Torch-free.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/data/npy.h"

namespace st::data {

class NpzArchive {
 public:
  // Opens a file. Throws DatasetFileError naming it when it is missing or
  // not a zip archive.
  static NpzArchive open(const std::string& path);
  // The same over bytes in memory; `name` stands for the file in errors.
  static NpzArchive from_bytes(std::vector<uint8_t> bytes, const std::string& name);

  NpzArchive(NpzArchive&&) noexcept;
  NpzArchive& operator=(NpzArchive&&) noexcept;
  ~NpzArchive();

  const std::string& file() const { return file_; }
  // The arrays' names (members without ".npy"), in archive order.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const;
  // Reads only the header (the first bytes of the member). Throws
  // DatasetFileError naming the file and the array: missing, corrupt, bad
  // header.
  NpyHeader header(const std::string& name) const;
  // Reads the whole array; its data must be exactly what the header says.
  NpyArray read(const std::string& name) const;

 private:
  struct Zip;
  NpzArchive(std::string file, std::unique_ptr<Zip> zip);
  std::vector<uint8_t> read_member(const std::string& name, uint64_t limit) const;

  std::string file_;
  std::unique_ptr<Zip> zip_;
  std::vector<std::string> names_;
};

// One array to write: its name (no ".npy") and its .npy bytes (npy_bytes()).
using NpzEntry = std::pair<std::string, std::vector<uint8_t>>;

// Writes an uncompressed .npz (as numpy.savez does) through a temporary
// file renamed into place, so a reader never sees half a file. Throws
// DatasetFileError naming the path on failure.
void write_npz(const std::string& path, const std::vector<NpzEntry>& entries);

}  // namespace st::data
