#pragma once
// NumPy's .npy array format (numpy.lib.format, versions 1.0, 2.0 and 3.0):
// a magic string, a version, a header length, an ASCII dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }
// padded to a multiple of 64 bytes, then the raw C-order data.
//
// Written here rather than taken from xtensor's xnpy.hpp (Debian's
// libxtensor-dev 0.24), because that reader is not safe on untrusted files:
// a v1 header length above 127 is read as negative (signed char), empty
// strings are indexed, shape values are parsed unchecked, the data size is
// allocated without a bound or an overflow check, and a short read is not
// noticed. Every check below names the file and the array. Torch-free.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace st::data {

// Bad dataset file: names the file, the field (an array such as
// "y_train", or "y_train[17]" for one element; empty for the file as a
// whole) and the problem: "FILE: FIELD: problem".
class DatasetFileError : public std::runtime_error {
 public:
  DatasetFileError(std::string file, std::string field, const std::string& problem);
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }

 private:
  std::string file_, field_;
};

// The element types the readers accept, as NumPy names them (little-endian
// or byte-order-free): u1 i1 u2 i2 u4 i4 u8 i8 f4 f8.
struct NpyDtype {
  char kind = 'u';  // 'u' unsigned, 'i' signed, 'f' floating point
  int bytes = 1;
  std::string name() const;  // e.g. "u1", "f4"
  bool operator==(const NpyDtype& other) const { return kind == other.kind && bytes == other.bytes; }
};

struct NpyHeader {
  NpyDtype dtype;
  std::vector<int64_t> shape;  // () for a scalar
  std::size_t data_offset = 0;  // where the data starts in the .npy bytes
  uint64_t elements() const;    // product of the shape (1 for a scalar)
  uint64_t data_bytes() const { return elements() * static_cast<uint64_t>(dtype.bytes); }
};

// Largest array the readers take (16 GiB): checked before any allocation.
inline constexpr uint64_t kMaxNpyBytes = uint64_t{1} << 34;

// Parses the header at the start of `bytes` (at least the magic, version,
// length and the header itself must be there). Refuses big-endian and
// Fortran-order arrays, object and structured dtypes, negative or
// overflowing shapes. Throws DatasetFileError(file, field, ...).
NpyHeader parse_npy_header(const uint8_t* bytes, std::size_t size, const std::string& file,
                           const std::string& field);

// A whole array: header plus data, the data exactly as long as the header
// says (a short or long file is an error).
struct NpyArray {
  NpyHeader header;
  std::vector<uint8_t> data;  // C order, little-endian

  // Element i as a double / as an integer (for labels: exact for every
  // integer dtype; throws for floats).
  double value(uint64_t i) const;
  int64_t integer(uint64_t i) const;
};
NpyArray parse_npy(std::vector<uint8_t> bytes, const std::string& file, const std::string& field);

// The .npy bytes of an array (version 1.0, or 2.0 for a header past 65535
// bytes), as numpy.save writes them.
std::vector<uint8_t> npy_bytes(const NpyDtype& dtype, const std::vector<int64_t>& shape, const void* data);

}  // namespace st::data
