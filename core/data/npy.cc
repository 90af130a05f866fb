#include "core/data/npy.h"

#include <fmt/format.h>

#include <cctype>
#include <cstring>
#include <limits>
#include <utility>

namespace st::data {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 20;  // numpy's own headers are under 200 bytes

std::string message_of(const std::string& file, const std::string& field, const std::string& problem) {
  return field.empty() ? fmt::format("{}: {}", file, problem) : fmt::format("{}: {}: {}", file, field, problem);
}

// The dict literal numpy writes: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. A small recursive-descent reader over exactly that
// grammar (strings, True/False, tuples of non-negative integers).
class HeaderReader {
 public:
  HeaderReader(std::string text, const std::string& file, const std::string& field)
      : text_(std::move(text)), file_(file), field_(field) {}

  NpyHeader read() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (!accept('}')) {
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        header.dtype = dtype_of(string_literal());
        have_descr = true;
      } else if (key == "fortran_order") {
        if (boolean()) fail("Fortran-order arrays are not supported; save a C-order copy (numpy.ascontiguousarray)");
        have_order = true;
      } else if (key == "shape") {
        header.shape = shape();
        have_shape = true;
      } else {
        fail(fmt::format("unknown header key '{}'", key));
      }
      if (!accept(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("text after the header's closing brace");
    if (!have_descr || !have_order || !have_shape) fail("the header lacks one of 'descr', 'fortran_order', 'shape'");
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw DatasetFileError(file_, field_, "bad .npy header: " + problem);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(fmt::format("expected '{}' at byte {}", c, pos_));
  }
  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      fail(fmt::format("expected a quoted string at byte {}", pos_));
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) fail("unterminated string");
    std::string value = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return value;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair<const char*, bool>{"True", true}, {"False", false}}) {
      const std::size_t n = std::strlen(word);
      if (text_.compare(pos_, n, word) == 0) {
        pos_ += n;
        return value;
      }
    }
    fail(fmt::format("expected True or False at byte {}", pos_));
  }
  int64_t dimension() {
    skip_space();
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
      fail(fmt::format("expected a non-negative integer in the shape at byte {}", pos_));
    uint64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      value = value * 10 + static_cast<uint64_t>(text_[pos_++] - '0');
      if (value > kMaxNpyBytes) fail("a dimension is implausibly large");
    }
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2's long suffix
    return static_cast<int64_t>(value);
  }
  std::vector<int64_t> shape() {
    std::vector<int64_t> dims;
    expect('(');
    while (!accept(')')) {
      dims.push_back(dimension());
      if (dims.size() > 32) fail("more than 32 dimensions");
      if (!accept(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }
  NpyDtype dtype_of(const std::string& descr) const {
    if (descr.size() != 3) fail(fmt::format("dtype '{}' is not one of u1 i1 u2 i2 u4 i4 u8 i8 f4 f8", descr));
    const char order = descr[0], kind = descr[1], digit = descr[2];
    NpyDtype dtype{kind, digit - '0'};
    const bool known_kind = kind == 'u' || kind == 'i' || (kind == 'f' && (dtype.bytes == 4 || dtype.bytes == 8));
    const bool known_size = dtype.bytes == 1 || dtype.bytes == 2 || dtype.bytes == 4 || dtype.bytes == 8;
    if (!known_kind || !known_size || (order != '<' && order != '|' && order != '=' && order != '>'))
      fail(fmt::format("dtype '{}' is not one of u1 i1 u2 i2 u4 i4 u8 i8 f4 f8", descr));
    if (order == '>' && dtype.bytes > 1)
      fail(fmt::format("dtype '{}' is big-endian; save a little-endian copy (e.g. .astype('<{}{}'))", descr, kind,
                       dtype.bytes));
    return dtype;
  }

  std::string text_;
  const std::string& file_;
  const std::string& field_;
  std::size_t pos_ = 0;
};

uint32_t little_endian(const uint8_t* p, int bytes) {
  uint32_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

}  // namespace

DatasetFileError::DatasetFileError(std::string file, std::string field, const std::string& problem)
    : std::runtime_error(message_of(file, field, problem)), file_(std::move(file)), field_(std::move(field)) {}

std::string NpyDtype::name() const { return fmt::format("{}{}", kind, bytes); }

uint64_t NpyHeader::elements() const {
  uint64_t count = 1;
  for (const int64_t dim : shape) count *= static_cast<uint64_t>(dim);
  return count;
}

NpyHeader parse_npy_header(const uint8_t* bytes, std::size_t size, const std::string& file, const std::string& field) {
  auto fail = [&](const std::string& problem) { throw DatasetFileError(file, field, problem); };
  if (size < kMagicBytes + 2 || std::memcmp(bytes, kMagic, kMagicBytes) != 0)
    fail("not a .npy array (no \\x93NUMPY magic string)");
  const int major = bytes[6];
  if (major < 1 || major > 3) fail(fmt::format(".npy format version {}.{} is not 1.0, 2.0 or 3.0", major, bytes[7]));
  const int length_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagicBytes + 2 + static_cast<std::size_t>(length_bytes);
  if (size < prefix) fail("truncated .npy header");
  const std::size_t header_bytes = little_endian(bytes + kMagicBytes + 2, length_bytes);
  if (header_bytes > kMaxHeaderBytes) fail(fmt::format(".npy header of {} bytes is implausibly long", header_bytes));
  if (size - prefix < header_bytes)
    fail(fmt::format("truncated .npy header: it declares {} bytes, {} follow", header_bytes, size - prefix));
  NpyHeader header =
      HeaderReader(std::string(reinterpret_cast<const char*>(bytes + prefix), header_bytes), file, field).read();
  // Checked before each multiplication, so the product never overflows.
  uint64_t total = static_cast<uint64_t>(header.dtype.bytes);
  for (const int64_t dim : header.shape) {
    const auto d = static_cast<uint64_t>(dim);
    if (d != 0 && total > kMaxNpyBytes / d)
      fail(fmt::format("arrays larger than {} bytes are not supported", kMaxNpyBytes));
    total *= d;
  }
  header.data_offset = prefix + header_bytes;
  return header;
}

NpyArray parse_npy(std::vector<uint8_t> bytes, const std::string& file, const std::string& field) {
  NpyArray array;
  array.header = parse_npy_header(bytes.data(), bytes.size(), file, field);
  const uint64_t expected = array.header.data_bytes();
  const uint64_t present = bytes.size() - array.header.data_offset;
  if (present != expected)
    throw DatasetFileError(file, field,
                           fmt::format("{} data bytes for shape {} of {}, but {} are present ({})", expected,
                                       fmt::join(array.header.shape, "x"), array.header.dtype.name(), present,
                                       present < expected ? "truncated" : "trailing bytes"));
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(array.header.data_offset));
  array.data = std::move(bytes);
  return array;
}

double NpyArray::value(uint64_t i) const {
  const uint8_t* p = data.data() + i * static_cast<uint64_t>(header.dtype.bytes);
  if (header.dtype.kind == 'f') {
    if (header.dtype.bytes == 4) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  return static_cast<double>(integer(i));
}

int64_t NpyArray::integer(uint64_t i) const {
  if (header.dtype.kind == 'f') throw std::logic_error("NpyArray::integer on a floating-point array");
  const int bytes = header.dtype.bytes;
  const uint8_t* p = data.data() + i * static_cast<uint64_t>(bytes);
  uint64_t raw = 0;
  for (int b = bytes - 1; b >= 0; --b) raw = (raw << 8) | p[b];
  if (header.dtype.kind == 'i' && bytes < 8 && (raw >> (8 * bytes - 1)) & 1) raw |= ~uint64_t{0} << (8 * bytes);
  // u8 values past int64's range come out negative: callers range-check.
  return static_cast<int64_t>(raw);
}

std::vector<uint8_t> npy_bytes(const NpyDtype& dtype, const std::vector<int64_t>& shape, const void* data) {
  std::string dims;
  for (const int64_t d : shape) dims += fmt::format("{}, ", d);
  if (shape.size() > 1) dims.resize(dims.size() - 2);  // (2, 3) but (5,) and ()
  else if (shape.size() == 1) dims.resize(dims.size() - 1);
  std::string header = fmt::format("{{'descr': '{}{}', 'fortran_order': False, 'shape': ({}), }}",
                                   dtype.bytes == 1 ? '|' : '<', dtype.name(), dims);
  const bool wide = header.size() + 1 + kMagicBytes + 4 > 65535;
  const std::size_t prefix = kMagicBytes + 2 + (wide ? 4 : 2);
  const std::size_t padded = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - prefix - header.size() - 1, ' ');
  header.push_back('\n');
  NpyHeader described{dtype, shape, 0};
  std::vector<uint8_t> out(prefix);
  std::memcpy(out.data(), kMagic, kMagicBytes);
  out[6] = wide ? 2 : 1;
  out[7] = 0;
  const uint32_t length = static_cast<uint32_t>(header.size());
  for (std::size_t b = 0; b < (wide ? 4u : 2u); ++b) out[8 + b] = static_cast<uint8_t>(length >> (8 * b));
  out.insert(out.end(), header.begin(), header.end());
  const auto* begin = static_cast<const uint8_t*>(data);
  out.insert(out.end(), begin, begin + described.data_bytes());
  return out;
}

}  // namespace st::data
