#pragma once
// Wire encoding of one sparse chunk (the payload of a gradient message; the
// transport adds its own frame around it). Little-endian, no padding:
//
//   offset size field
//   0      1    version      (1)
//   1      1    index_enc    0 = u32, 1 = u16 (numel <= 65536), 2 = block16
//   2      1    value_enc    0 = f32, 1 = f16 (IEEE binary16, round to nearest even)
//   3      1    reserved     (0)
//   4      4    count        number of (index, value) pairs
//   8      8    numel        elements of the dense tensor
//   16     ...  indices      u32[count] | u16[count] | u32 blocks, u32[blocks]
//   ...    ...  values       f32[count] | u16[count]
//
// block16 sends one u32 block id per 16 consecutive indices 16b..16b+15
// (the tensor's last block may be shorter); it needs a chunk made of whole
// blocks, which is what thresholdv16 writes.
//
// decode() trusts nothing: every length is checked against the bytes
// received before anything is read, and indices must be strictly
// increasing and below numel; values must be finite. Errors name the field.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "core/compress/sparse.h"
#include "core/simd/simd_level.h"

namespace st::compress {

enum class IndexEncoding : uint8_t { kU32 = 0, kU16 = 1, kBlock16 = 2 };
enum class ValueEncoding : uint8_t { kF32 = 0, kF16 = 1 };

struct WireFormat {
  IndexEncoding index = IndexEncoding::kU32;
  ValueEncoding value = ValueEncoding::kF32;
};

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr std::size_t kWireHeaderBytes = 16;
// The largest tensor whose indices may go as u16.
constexpr std::size_t kU16MaxNumel = 65536;
constexpr float kMaxHalf = 65504.0f;

// True when the chunk consists of whole 16-element blocks (block16 applies).
bool is_block_structured(SparseView chunk, std::size_t numel);

// The most compact index encoding valid for this chunk.
IndexEncoding best_index_encoding(SparseView chunk, std::size_t numel);

// Throws WireError when the format cannot carry this chunk (u16 with
// numel > 65536, block16 on a chunk that is not block-structured).
std::size_t encoded_size(SparseView chunk, std::size_t numel, WireFormat format);

// encoded_size of a chunk that lists every entry of a numel-element tensor
// in order, at its best_index_encoding: what a tensor sent whole costs
// (StellaTrainOptions::dense_up_to; the controller's TrafficModel).
std::size_t whole_chunk_size(std::size_t numel, ValueEncoding value);

// Writes the chunk; returns the bytes written. Throws WireError when
// capacity is too small, the format does not fit, or (f16) a value is
// non-finite or beyond +-65504, naming its position.
std::size_t encode(SparseView chunk, std::size_t numel, WireFormat format, uint8_t* out,
                   std::size_t capacity, simd::Level simd = simd::default_level());

struct WireHeader {
  WireFormat format;
  std::size_t count = 0;
  std::size_t numel = 0;
};

// Reads and checks the header and the total size. Throws WireError.
WireHeader peek_header(const uint8_t* data, std::size_t size);

// Decodes into out (capacity >= header count); returns the header.
WireHeader decode(const uint8_t* data, std::size_t size, SparseBuffers out,
                  simd::Level simd = simd::default_level());

}  // namespace st::compress
