// Wire encodings of sparse chunks: every encoding round-trips, every
// malformed input is a WireError naming the field, and a bounded randomized
// fuzz of the decoder finds no crash.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <cstring>
#include <random>

#include "compress_test_util.h"
#include "core/compress/compressor_names.h"
#include "core/compress/compressors.h"
#include "core/compress/wire.h"

namespace st::compress {
namespace {

SparseChunk make_chunk(const std::string& compressor, std::size_t n, std::size_t k, uint64_t seed) {
  auto c = make_compressor(compressor, {simd::Level::kPortable, seed});
  auto state = c->make_state(n, k, "w");
  const auto g = testing::structured(n, seed, 10.0f);
  SparseChunk chunk;
  chunk.reserve(c->max_output(n, k));
  chunk.count = c->compress(Span<const float>(g), k, *state, chunk.buffers());
  return chunk;
}

float half_round(float x) { return static_cast<float>(Eigen::half(x)); }

std::vector<uint8_t> encode_vec(const SparseChunk& chunk, std::size_t n, WireFormat f,
                                simd::Level level = simd::Level::kPortable) {
  std::vector<uint8_t> bytes(encoded_size(chunk.view(), n, f));
  EXPECT_EQ(encode(chunk.view(), n, f, bytes.data(), bytes.size(), level), bytes.size());
  return bytes;
}

void expect_round_trip(const SparseChunk& chunk, std::size_t n, WireFormat f) {
  for (auto level : testing::simd_levels()) {
    const auto bytes = encode_vec(chunk, n, f, level);
    SparseChunk back;
    back.reserve(chunk.count);
    const auto h = decode(bytes.data(), bytes.size(), back.buffers(), level);
    ASSERT_EQ(h.count, chunk.count);
    ASSERT_EQ(h.numel, n);
    for (std::size_t j = 0; j < chunk.count; ++j) {
      ASSERT_EQ(back.indices[j], chunk.indices[j]) << j;
      const float want = f.value == ValueEncoding::kF16 ? half_round(chunk.values[j]) : chunk.values[j];
      ASSERT_EQ(back.values[j], want) << j;
    }
  }
}

TEST(Wire, EveryEncodingRoundTrips) {
  const std::size_t small = 16 * 1000 + 7, large = 200003;
  for (auto value : {ValueEncoding::kF32, ValueEncoding::kF16}) {
    expect_round_trip(make_chunk("topk", large, 2000, 1), large, {IndexEncoding::kU32, value});
    expect_round_trip(make_chunk("topk", small, 300, 2), small, {IndexEncoding::kU16, value});
    expect_round_trip(make_chunk("topk", small, 300, 2), small, {IndexEncoding::kU32, value});
    expect_round_trip(make_chunk("randomk", 65536, 500, 3), 65536, {IndexEncoding::kU16, value});
    // block16, including a selected short tail block.
    auto blocks = make_chunk("thresholdv16", small, 320, 4);
    expect_round_trip(blocks, small, {IndexEncoding::kBlock16, value});
    SparseChunk tail;
    tail.reserve(23);
    for (std::size_t e = 0; e < 16; ++e) tail.indices[e] = static_cast<uint32_t>(32 + e), tail.values[e] = 1.0f + e;
    for (std::size_t e = 0; e < 7; ++e) tail.indices[16 + e] = static_cast<uint32_t>(16 * 1000 + e), tail.values[16 + e] = -2.0f;
    tail.count = 23;
    expect_round_trip(tail, small, {IndexEncoding::kBlock16, value});
    // Empty chunks.
    SparseChunk empty;
    expect_round_trip(empty, small, {IndexEncoding::kU16, value});
    expect_round_trip(empty, large, {IndexEncoding::kBlock16, value});
  }
}

TEST(Wire, BestEncodingAndSizes) {
  const auto blocks = make_chunk("thresholdv16", 16 * 5000, 1600, 5);
  EXPECT_EQ(best_index_encoding(blocks.view(), 16 * 5000), IndexEncoding::kBlock16);
  const auto scattered = make_chunk("topk", 60000, 100, 6);
  EXPECT_EQ(best_index_encoding(scattered.view(), 60000), IndexEncoding::kU16);
  EXPECT_EQ(best_index_encoding(scattered.view(), 70000), IndexEncoding::kU32);
  // block16 + f16: 4 bytes per 16 indices and 2 per value.
  EXPECT_EQ(encoded_size(blocks.view(), 16 * 5000, {IndexEncoding::kBlock16, ValueEncoding::kF16}),
            kWireHeaderBytes + 4 + 4 * 100 + 2 * 1600);
}

// A tensor sent whole (StellaTrain's dense_up_to): every compressor at
// k = numel lists every entry in order, and whole_chunk_size, which the
// controller prices such a tensor by, is what encode writes for it at its
// best encoding: u16 under one block, block16 from one block on (a partial
// last block included).
TEST(Wire, WholeChunkSizeIsWhatATensorSentWholeEncodesTo) {
  for (const std::string& compressor : compress::base_compressor_names())
    for (std::size_t n : {1u, 10u, 16u, 40u, 512u, 4000u}) {
      const auto chunk = make_chunk(compressor, n, n, 7);
      ASSERT_EQ(chunk.count, n) << compressor << " " << n;
      for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(chunk.indices[j], j) << compressor << " " << n;
      for (const auto value : {ValueEncoding::kF32, ValueEncoding::kF16}) {
        const WireFormat f{best_index_encoding(chunk.view(), n), value};
        EXPECT_EQ(encode_vec(chunk, n, f).size(), whole_chunk_size(n, value)) << compressor << " " << n;
      }
    }
  EXPECT_EQ(whole_chunk_size(40, ValueEncoding::kF32), kWireHeaderBytes + 4 + 4 * 3 + 4 * 40);
  EXPECT_EQ(whole_chunk_size(10, ValueEncoding::kF16), kWireHeaderBytes + 2 * 10 + 2 * 10);
}

TEST(Wire, EncodeRejectsWhatTheFormatCannotCarry) {
  const auto scattered = make_chunk("topk", 70000, 100, 7);
  EXPECT_THROW(encoded_size(scattered.view(), 70000, {IndexEncoding::kU16, ValueEncoding::kF32}), WireError);
  EXPECT_THROW(encoded_size(scattered.view(), 70000, {IndexEncoding::kBlock16, ValueEncoding::kF32}), WireError);
  SparseChunk big;
  big.reserve(2);
  big.indices[0] = 1, big.indices[1] = 5;
  big.values[0] = 1.0f, big.values[1] = 70000.0f;
  big.count = 2;
  std::vector<uint8_t> out(256);
  try {
    encode(big.view(), 10, {IndexEncoding::kU16, ValueEncoding::kF16}, out.data(), out.size());
    FAIL();
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find("position 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(encode(big.view(), 10, {IndexEncoding::kU16, ValueEncoding::kF32}, out.data(), 10), WireError);
}

void expect_decode_error(std::vector<uint8_t> bytes, const std::string& field) {
  SparseChunk out;
  out.reserve(4096);
  try {
    decode(bytes.data(), bytes.size(), out.buffers());
    ADD_FAILURE() << "no error, expected one about " << field;
  } catch (const WireError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Wire, MalformedInputNamesTheField) {
  const auto chunk = make_chunk("topk", 5000, 50, 8);
  const auto good = encode_vec(chunk, 5000, {IndexEncoding::kU32, ValueEncoding::kF32});
  expect_decode_error({good.begin(), good.begin() + 10}, "header");
  auto b = good;
  b[0] = 9;
  expect_decode_error(b, "version");
  b = good, b[1] = 7;
  expect_decode_error(b, "index_enc");
  b = good, b[2] = 5;
  expect_decode_error(b, "value_enc");
  b = good, b[3] = 1;
  expect_decode_error(b, "reserved");
  b = good, b.pop_back();
  expect_decode_error(b, "count");
  b = good, b[4] += 1;
  expect_decode_error(b, "count");
  b = good;
  uint32_t huge = 6000;  // first index beyond numel
  std::memcpy(b.data() + kWireHeaderBytes, &huge, 4);
  expect_decode_error(b, "numel");
  b = good;
  std::memcpy(b.data() + kWireHeaderBytes + 4, b.data() + kWireHeaderBytes, 4);  // repeat index 0
  expect_decode_error(b, "increasing");
  b = good;
  const float nan = std::nanf("");
  std::memcpy(b.data() + kWireHeaderBytes + 4 * 50, &nan, 4);
  expect_decode_error(b, "finite");
  // A u16 index encoding claimed for a tensor too large for it.
  b = encode_vec(chunk, 5000, {IndexEncoding::kU16, ValueEncoding::kF32});
  const uint64_t numel = 100000;
  std::memcpy(b.data() + 8, &numel, 8);
  expect_decode_error(b, "u16");
  // block16 with a wrong block count and with a block beyond numel.
  const auto blocks = make_chunk("thresholdv16", 16 * 100, 64, 9);
  const auto gb = encode_vec(blocks, 16 * 100, {IndexEncoding::kBlock16, ValueEncoding::kF32});
  b = gb, b[kWireHeaderBytes] += 1;
  expect_decode_error(b, "blocks");
  b = gb;
  const uint32_t far = 1000;
  std::memcpy(b.data() + kWireHeaderBytes + 4, &far, 4);
  expect_decode_error(b, "block id");
}

// A bounded randomized fuzz: mutate valid encodings (bit flips, truncation,
// extension, random header fields) and decode. Every outcome must be a
// clean decode with valid indices or a WireError: no crash, no other
// exception, no read past the buffer.
TEST(Wire, RandomizedFuzzFindsNoCrash) {
  std::mt19937_64 rng(2024);
  std::vector<std::vector<uint8_t>> seeds;
  for (auto f : {WireFormat{IndexEncoding::kU32, ValueEncoding::kF32}, WireFormat{IndexEncoding::kU16, ValueEncoding::kF16}})
    seeds.push_back(encode_vec(make_chunk("topk", 3000, 40, 10), 3000, f));
  seeds.push_back(encode_vec(make_chunk("thresholdv16", 16 * 200 + 3, 64, 11), 16 * 200 + 3,
                             {IndexEncoding::kBlock16, ValueEncoding::kF16}));
  SparseChunk out;
  out.reserve(8192);
  int decoded = 0, rejected = 0;
  for (int iter = 0; iter < 30000; ++iter) {
    auto bytes = seeds[rng() % seeds.size()];
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations; ++m) {
      switch (rng() % 4) {
        case 0: if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: bytes.resize(rng() % (bytes.size() + 1)); break;
        case 2: bytes.resize(bytes.size() + rng() % 64, static_cast<uint8_t>(rng())); break;
        case 3: if (bytes.size() >= 16) bytes[rng() % 16] = static_cast<uint8_t>(rng()); break;
      }
    }
    try {
      const auto h = decode(bytes.data(), bytes.size(), out.buffers());
      for (std::size_t j = 0; j < h.count; ++j) ASSERT_LT(out.indices[j], h.numel);
      ++decoded;
    } catch (const WireError&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(decoded, 0);  // some mutations (e.g. value bits) still decode
}

}  // namespace
}  // namespace st::compress
