#include "core/compress/wire.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/compress/kernels.h"

namespace st::compress {
namespace {

constexpr uint8_t kVersion = 1;
constexpr std::size_t kBlock = 16;

std::size_t blocks_in(std::size_t count) { return (count + kBlock - 1) / kBlock; }

// The most compact index encoding for `count` entries of a numel-element
// tensor: block16 from one whole block on where the entries are whole
// blocks, else u16 where every index fits.
IndexEncoding most_compact(std::size_t count, std::size_t numel, bool block_structured) {
  if (count >= kBlock && block_structured) return IndexEncoding::kBlock16;
  return numel <= kU16MaxNumel ? IndexEncoding::kU16 : IndexEncoding::kU32;
}

std::size_t index_bytes(IndexEncoding e, std::size_t count) {
  switch (e) {
    case IndexEncoding::kU32: return 4 * count;
    case IndexEncoding::kU16: return 2 * count;
    case IndexEncoding::kBlock16: return 4 + 4 * blocks_in(count);
  }
  return 0;
}

std::size_t value_bytes(ValueEncoding e, std::size_t count) {
  return (e == ValueEncoding::kF32 ? 4 : 2) * count;
}

// memcpy with a null pointer is undefined even for zero bytes, and an empty
// chunk may carry null arrays (UBSan flagged it).
void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes > 0) std::memcpy(to, from, bytes);
}

template <class T>
void put(uint8_t*& p, T v) {
  std::memcpy(p, &v, sizeof v);
  p += sizeof v;
}
template <class T>
T get(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

void check_format_fits(SparseView chunk, std::size_t numel, WireFormat f) {
  if (chunk.count > 0xffffffffu || numel > 0xffffffffull)
    throw WireError(fmt::format("sparse chunk: count {} or numel {} exceeds u32", chunk.count, numel));
  if (f.index == IndexEncoding::kU16 && numel > kU16MaxNumel)
    throw WireError(fmt::format("sparse chunk: index_enc u16 needs numel <= {}, got {}", kU16MaxNumel, numel));
  if (f.index == IndexEncoding::kBlock16 && !is_block_structured(chunk, numel))
    throw WireError("sparse chunk: index_enc block16 needs whole 16-element blocks");
}

void encode_values(SparseView chunk, ValueEncoding e, uint8_t* p, const Kernels& k) {
  if (e == ValueEncoding::kF32) {
    copy_bytes(p, chunk.values, 4 * chunk.count);
    return;
  }
  for (std::size_t j = 0; j < chunk.count; ++j)
    if (!(std::fabs(chunk.values[j]) <= kMaxHalf))
      throw WireError(fmt::format("sparse chunk: value at position {} ({}) does not fit f16", j,
                                  chunk.values[j]));
  // The u16 output is unaligned inside the message: convert in small
  // aligned batches, then copy.
  uint16_t batch[256];
  for (std::size_t j = 0; j < chunk.count; j += 256) {
    const std::size_t m = std::min<std::size_t>(256, chunk.count - j);
    k.to_half(chunk.values + j, batch, m);
    std::memcpy(p + 2 * j, batch, 2 * m);
  }
}

}  // namespace

bool is_block_structured(SparseView chunk, std::size_t numel) {
  std::size_t j = 0;
  while (j < chunk.count) {
    const std::size_t first = chunk.indices[j];
    if (first % kBlock != 0) return false;
    const std::size_t len = std::min(kBlock, numel > first ? numel - first : 0);
    if (len == 0 || j + len > chunk.count) return false;
    for (std::size_t e = 0; e < len; ++e)
      if (chunk.indices[j + e] != first + e) return false;
    j += len;
  }
  return true;
}

IndexEncoding best_index_encoding(SparseView chunk, std::size_t numel) {
  return most_compact(chunk.count, numel, is_block_structured(chunk, numel));
}

std::size_t encoded_size(SparseView chunk, std::size_t numel, WireFormat f) {
  check_format_fits(chunk, numel, f);
  return kWireHeaderBytes + index_bytes(f.index, chunk.count) + value_bytes(f.value, chunk.count);
}

std::size_t whole_chunk_size(std::size_t numel, ValueEncoding value) {
  // Every index in order is block-structured.
  const IndexEncoding index = most_compact(numel, numel, true);
  return kWireHeaderBytes + index_bytes(index, numel) + value_bytes(value, numel);
}

std::size_t encode(SparseView chunk, std::size_t numel, WireFormat f, uint8_t* out,
                   std::size_t capacity, simd::Level simd) {
  const std::size_t size = encoded_size(chunk, numel, f);
  if (capacity < size)
    throw WireError(fmt::format("sparse chunk: output buffer holds {} bytes, {} needed", capacity, size));
  uint8_t* p = out;
  put<uint8_t>(p, kVersion);
  put<uint8_t>(p, static_cast<uint8_t>(f.index));
  put<uint8_t>(p, static_cast<uint8_t>(f.value));
  put<uint8_t>(p, 0);
  put<uint32_t>(p, static_cast<uint32_t>(chunk.count));
  put<uint64_t>(p, numel);
  switch (f.index) {
    case IndexEncoding::kU32:
      copy_bytes(p, chunk.indices, 4 * chunk.count);
      p += 4 * chunk.count;
      break;
    case IndexEncoding::kU16:
      for (std::size_t j = 0; j < chunk.count; ++j) put<uint16_t>(p, static_cast<uint16_t>(chunk.indices[j]));
      break;
    case IndexEncoding::kBlock16: {
      std::size_t blocks = 0;
      uint8_t* count_at = p;
      p += 4;
      for (std::size_t j = 0; j < chunk.count; j += kBlock, ++blocks)
        put<uint32_t>(p, chunk.indices[j] / kBlock);
      // Only the tensor's last block can be short, so this equals
      // blocks_in(count), the number encoded_size() reserved.
      const auto blocks32 = static_cast<uint32_t>(blocks);
      std::memcpy(count_at, &blocks32, 4);
      break;
    }
  }
  encode_values(chunk, f.value, p, kernels(simd));
  return size;
}

WireHeader peek_header(const uint8_t* data, std::size_t size) {
  if (size < kWireHeaderBytes)
    throw WireError(fmt::format("sparse chunk: {} bytes, shorter than the {}-byte header", size, kWireHeaderBytes));
  const uint8_t* p = data;
  const auto version = get<uint8_t>(p);
  const auto index_enc = get<uint8_t>(p);
  const auto value_enc = get<uint8_t>(p);
  const auto reserved = get<uint8_t>(p);
  if (version != kVersion) throw WireError(fmt::format("sparse chunk: field 'version' is {}, expected {}", version, kVersion));
  if (index_enc > 2) throw WireError(fmt::format("sparse chunk: field 'index_enc' is {}, expected 0..2", index_enc));
  if (value_enc > 1) throw WireError(fmt::format("sparse chunk: field 'value_enc' is {}, expected 0..1", value_enc));
  if (reserved != 0) throw WireError(fmt::format("sparse chunk: field 'reserved' is {}, expected 0", reserved));
  WireHeader h;
  h.format = {static_cast<IndexEncoding>(index_enc), static_cast<ValueEncoding>(value_enc)};
  h.count = get<uint32_t>(p);
  h.numel = get<uint64_t>(p);
  if (h.numel > 0xffffffffull) throw WireError(fmt::format("sparse chunk: field 'numel' is {}, above u32", h.numel));
  if (h.count > h.numel) throw WireError(fmt::format("sparse chunk: field 'count' {} exceeds numel {}", h.count, h.numel));
  if (h.format.index == IndexEncoding::kU16 && h.numel > kU16MaxNumel)
    throw WireError(fmt::format("sparse chunk: index_enc u16 with numel {} > {}", h.numel, kU16MaxNumel));
  const std::size_t expect = kWireHeaderBytes + index_bytes(h.format.index, h.count) + value_bytes(h.format.value, h.count);
  if (size != expect)
    throw WireError(fmt::format("sparse chunk: field 'count' = {} implies {} bytes, got {}", h.count, expect, size));
  return h;
}

namespace {

void decode_blocks(const uint8_t*& p, const WireHeader& h, uint32_t* out) {
  const auto blocks = get<uint32_t>(p);
  if (blocks != blocks_in(h.count))
    throw WireError(fmt::format("sparse chunk: field 'blocks' is {}, expected {}", blocks, blocks_in(h.count)));
  std::size_t j = 0;
  int64_t previous = -1;
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto id = get<uint32_t>(p);
    const std::size_t first = std::size_t{id} * kBlock;
    if (static_cast<int64_t>(id) <= previous || first >= h.numel)
      throw WireError(fmt::format("sparse chunk: block id {} at position {} is out of order or beyond numel {}", id, b, h.numel));
    previous = id;
    const std::size_t len = std::min(kBlock, h.numel - first);
    if (j + len > h.count || (len < kBlock && b + 1 != blocks))
      throw WireError(fmt::format("sparse chunk: block {} (id {}) does not fit count {}", b, id, h.count));
    for (std::size_t e = 0; e < len; ++e) out[j + e] = static_cast<uint32_t>(first + e);
    j += len;
  }
  if (j != h.count) throw WireError(fmt::format("sparse chunk: blocks hold {} indices, field 'count' says {}", j, h.count));
}

void check_indices(const uint32_t* idx, const WireHeader& h) {
  for (std::size_t j = 0; j < h.count; ++j) {
    if (idx[j] >= h.numel)
      throw WireError(fmt::format("sparse chunk: index {} at position {} is not below numel {}", idx[j], j, h.numel));
    if (j > 0 && idx[j] <= idx[j - 1])
      throw WireError(fmt::format("sparse chunk: indices not strictly increasing at position {}", j));
  }
}

}  // namespace

WireHeader decode(const uint8_t* data, std::size_t size, SparseBuffers out, simd::Level simd) {
  const WireHeader h = peek_header(data, size);
  if (out.capacity < h.count)
    throw WireError(fmt::format("sparse chunk: {} pairs do not fit the output capacity {}", h.count, out.capacity));
  const uint8_t* p = data + kWireHeaderBytes;
  switch (h.format.index) {
    case IndexEncoding::kU32:
      copy_bytes(out.indices, p, 4 * h.count);
      p += 4 * h.count;
      break;
    case IndexEncoding::kU16:
      for (std::size_t j = 0; j < h.count; ++j) out.indices[j] = get<uint16_t>(p);
      break;
    case IndexEncoding::kBlock16:
      decode_blocks(p, h, out.indices);
      break;
  }
  check_indices(out.indices, h);
  if (h.format.value == ValueEncoding::kF32) {
    copy_bytes(out.values, p, 4 * h.count);
  } else {
    uint16_t batch[256];
    for (std::size_t j = 0; j < h.count; j += 256) {
      const std::size_t m = std::min<std::size_t>(256, h.count - j);
      std::memcpy(batch, p + 2 * j, 2 * m);
      kernels(simd).from_half(batch, out.values + j, m);
    }
  }
  for (std::size_t j = 0; j < h.count; ++j)
    if (!std::isfinite(out.values[j]))
      throw WireError(fmt::format("sparse chunk: value at position {} is not finite", j));
  return h;
}

}  // namespace st::compress
