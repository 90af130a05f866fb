#pragma once
// What a run read from a user's file (a dataset, a TorchScript model), for
// its manifest: the path, the size and a CRC-32 of the contents, so two
// results folders say whether they came from the same file. CRC-32 (zlib's,
// already a dependency) detects a changed file; it is not a security hash.
#include <cstdint>
#include <string>

namespace st::util {

struct FileFingerprint {
  std::string path;
  uint64_t bytes = 0;
  std::string crc32;  // eight lowercase hex digits
};

// Throws std::runtime_error naming the file when it cannot be read.
FileFingerprint fingerprint_file(const std::string& path);

}  // namespace st::util
