// Frame codec: layout, round trips, every malformed-header error, and a
// bounded randomized fuzz of the incremental decoder.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/comm/frame.h"

namespace st::comm {
namespace {

std::vector<uint8_t> pattern(std::size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(seed + i * 31);
  return bytes;
}

FrameHeader data_header(Rank source, uint32_t tag) {
  FrameHeader header;
  header.type = FrameType::kData;
  header.source = source;
  header.tag = tag;
  return header;
}

FrameHeader control_header(FrameType type, Rank source) {
  FrameHeader header;
  header.type = type;
  header.source = source;
  return header;
}

std::vector<Frame> decode_all(const std::vector<uint8_t>& stream, std::size_t piece, FrameLimits limits = {}) {
  FrameDecoder decoder(limits);
  std::vector<Frame> frames;
  for (std::size_t offset = 0; offset < stream.size(); offset += piece) {
    const std::size_t size = std::min(piece, stream.size() - offset);
    decoder.feed(stream.data() + offset, size, [&](Frame&& frame) { frames.push_back(std::move(frame)); });
  }
  EXPECT_TRUE(decoder.at_frame_boundary());
  return frames;
}

// A header with one byte range overwritten, for the malformed-header cases.
HeaderBytes header_with(std::size_t offset, std::vector<uint8_t> bytes, FrameHeader base = data_header(1, 7)) {
  HeaderBytes header = encode_header(base);
  std::memcpy(header.data() + offset, bytes.data(), bytes.size());
  return header;
}

void expect_frame_error(const HeaderBytes& header, const std::string& field, uint64_t value,
                        FrameLimits limits = {}) {
  FrameDecoder decoder(limits);
  try {
    decoder.feed(header.data(), header.size(), [](Frame&&) { FAIL() << "no frame expected"; });
    FAIL() << "expected FrameError on " << field;
  } catch (const FrameError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_EQ(error.value(), value) << error.what();
    EXPECT_NE(std::string(error.what()).find(field), std::string::npos);
  }
  // The stream has lost its framing: the decoder refuses to go on.
  EXPECT_THROW(decoder.feed(header.data(), 1, [](Frame&&) {}), FrameError);
}

TEST(Frame, HeaderLayoutIsLittleEndian) {
  FrameHeader header = data_header(0x01020304, 0xA1B2C3D4);
  header.payload_bytes = 0x1122334455667788ULL;
  const HeaderBytes bytes = encode_header(header);
  const std::vector<uint8_t> expected = {'S',  'T',  'F',  '1',  1,    1,    0,    0,    0x04, 0x03, 0x02, 0x01,
                                         0xD4, 0xC3, 0xB2, 0xA1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
  EXPECT_EQ(std::vector<uint8_t>(bytes.begin(), bytes.end()), expected);
  FrameLimits no_limit;
  no_limit.max_payload_bytes = UINT64_MAX;
  const FrameHeader decoded = decode_header(bytes.data(), no_limit);
  EXPECT_EQ(decoded.source, 0x01020304);
  EXPECT_EQ(decoded.tag, 0xA1B2C3D4u);
  EXPECT_EQ(decoded.payload_bytes, 0x1122334455667788ULL);
}

TEST(Frame, RoundTripsEveryTypeAndSize) {
  std::vector<uint8_t> stream;
  std::vector<Frame> sent;
  for (std::size_t size : {0u, 1u, 23u, 24u, 25u, 4096u, 100000u}) {
    Frame frame{data_header(3, static_cast<uint32_t>(size * 7 + 1)), pattern(size, static_cast<uint8_t>(size))};
    sent.push_back(frame);
  }
  sent.push_back(Frame{control_header(FrameType::kHeartbeat, 2), {}});
  sent.push_back(Frame{control_header(FrameType::kHello, 5), encode_hello({8, 0xDEADBEEFCAFEF00DULL})});
  sent.push_back(Frame{control_header(FrameType::kGoodbye, 7), {}});
  for (auto& frame : sent) {
    frame.header.payload_bytes = frame.payload.size();
    const auto bytes = encode_frame(frame.header, frame.payload);
    stream.insert(stream.end(), bytes.begin(), bytes.end());
  }
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{24}, std::size_t{4096}, stream.size()}) {
    const auto frames = decode_all(stream, piece, FrameLimits{1 << 20, 8});
    ASSERT_EQ(frames.size(), sent.size()) << "piece " << piece;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(frames[i].header.type, sent[i].header.type);
      EXPECT_EQ(frames[i].header.source, sent[i].header.source);
      EXPECT_EQ(frames[i].header.tag, sent[i].header.tag);
      EXPECT_EQ(frames[i].header.payload_bytes, sent[i].payload.size());
      EXPECT_EQ(frames[i].payload, sent[i].payload);
    }
  }
  const HelloInfo hello = decode_hello(sent[sent.size() - 2].payload);
  EXPECT_EQ(hello.world_size, 8u);
  EXPECT_EQ(hello.session_id, 0xDEADBEEFCAFEF00DULL);
}

TEST(Frame, PayloadCanBeReadInPlace) {
  const auto payload = pattern(300000, 9);
  const auto bytes = encode_frame(data_header(1, 2), payload);
  FrameDecoder decoder;
  std::vector<Frame> frames;
  const auto sink = [&](Frame&& frame) { frames.push_back(std::move(frame)); };
  decoder.feed(bytes.data(), kFrameHeaderBytes + 10, sink);  // header plus a bit
  std::size_t offset = kFrameHeaderBytes + 10;
  while (decoder.payload_space_size() > 0) {
    const std::size_t take = std::min<std::size_t>(decoder.payload_space_size(), 65536);
    std::memcpy(decoder.payload_space(take), bytes.data() + offset, take);  // "the socket read"
    offset += take;
    decoder.commit_payload(take, sink);
  }
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, payload);
  EXPECT_EQ(decoder.payload_space(1), nullptr);
  EXPECT_THROW(decoder.commit_payload(1, sink), FrameError);
}

// Short reads: each payload_space(n) readies n more bytes past what was
// committed; committing more than was readied is refused.
TEST(Frame, PayloadIsReadiedWindowByWindow) {
  const auto payload = pattern(1 << 20, 3);
  const auto bytes = encode_frame(data_header(1, 2), payload);
  FrameDecoder decoder;
  std::vector<Frame> frames;
  const auto sink = [&](Frame&& frame) { frames.push_back(std::move(frame)); };
  decoder.feed(bytes.data(), kFrameHeaderBytes, sink);
  std::size_t offset = kFrameHeaderBytes;
  while (decoder.payload_space_size() > 0) {
    const std::size_t window = std::min<std::size_t>(decoder.payload_space_size(), 100000);
    uint8_t* space = decoder.payload_space(window);
    const std::size_t received = std::min<std::size_t>(window, 70001);  // a short read
    std::memcpy(space, bytes.data() + offset, received);
    offset += received;
    decoder.commit_payload(received, sink);
  }
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].payload, payload);

  decoder.feed(bytes.data(), kFrameHeaderBytes, sink);
  decoder.payload_space(10);
  EXPECT_THROW(decoder.commit_payload(11, sink), FrameError);
}

TEST(Frame, RejectsEveryMalformedHeaderField) {
  expect_frame_error(header_with(0, {'X', 'T', 'F', '1'}), "magic", 0x31465458);
  expect_frame_error(header_with(4, {0}), "version", 0);
  expect_frame_error(header_with(4, {2}), "version", 2);
  expect_frame_error(header_with(5, {0}), "type", 0);
  expect_frame_error(header_with(5, {6}), "type", 6);
  expect_frame_error(header_with(5, {255}), "type", 255);
  expect_frame_error(header_with(6, {1, 0}), "flags", 1);
  expect_frame_error(header_with(6, {0, 0x80}), "flags", 0x8000);
  expect_frame_error(header_with(8, {0xFF, 0xFF, 0xFF, 0xFF}), "source", 0xFFFFFFFF);
  expect_frame_error(header_with(8, {4, 0, 0, 0}), "source", 4, FrameLimits{1024, 4});
  // Lengths are refused before anything is allocated: 2^62 would not fit.
  FrameLimits small{1000, 0};
  expect_frame_error(header_with(16, {0xE9, 0x03, 0, 0, 0, 0, 0, 0}), "payload_bytes", 1001, small);
  expect_frame_error(header_with(16, {0, 0, 0, 0, 0, 0, 0, 0x40}), "payload_bytes", uint64_t{1} << 62);
  // Control frames: fixed payload sizes, no tag.
  expect_frame_error(header_with(16, {1}, control_header(FrameType::kHeartbeat, 1)), "payload_bytes", 1);
  expect_frame_error(header_with(16, {1}, control_header(FrameType::kGoodbye, 1)), "payload_bytes", 1);
  expect_frame_error(header_with(16, {15}, control_header(FrameType::kHello, 1)), "payload_bytes", 15);
  expect_frame_error(header_with(12, {9}, control_header(FrameType::kHeartbeat, 1)), "tag", 9);
}

// Padding (send_standing_for on real sockets): 1 byte to the maximum, no
// tag; its payload is read and dropped, whichever way it is read.
TEST(Frame, PaddingIsBoundedAndItsBytesAreDropped) {
  FrameHeader padding = control_header(FrameType::kPadding, 1);
  padding.payload_bytes = 1000;
  const auto head = encode_header(padding);
  std::vector<uint8_t> stream(head.begin(), head.end());
  stream.resize(stream.size() + 1000, 0xAB);
  const auto data = encode_frame(data_header(1, 7), pattern(300, 5));
  stream.insert(stream.end(), data.begin(), data.end());
  for (std::size_t piece : {1u, 7u, 4096u}) {
    const auto frames = decode_all(stream, piece, FrameLimits{1000, 0});
    ASSERT_EQ(frames.size(), 2u);
    EXPECT_EQ(frames[0].header.type, FrameType::kPadding);
    EXPECT_EQ(frames[0].header.payload_bytes, 1000u);
    EXPECT_TRUE(frames[0].payload.empty());
    EXPECT_EQ(frames[1].payload, pattern(300, 5));
  }
  // Read straight into payload_space(), short reads included.
  FrameDecoder decoder(FrameLimits{1000, 0});
  std::vector<Frame> frames;
  const auto sink = [&](Frame&& frame) { frames.push_back(std::move(frame)); };
  decoder.feed(stream.data(), kFrameHeaderBytes, sink);
  std::size_t offset = kFrameHeaderBytes;
  while (decoder.payload_space_size() > 0) {
    uint8_t* space = decoder.payload_space(600);
    const std::size_t received = std::min<std::size_t>(decoder.payload_space_size(), 333);
    std::memcpy(space, stream.data() + offset, received);
    offset += received;
    decoder.commit_payload(received, sink);
  }
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_TRUE(frames[0].payload.empty());
  EXPECT_TRUE(decoder.at_frame_boundary());

  FrameLimits small{1000, 0};
  expect_frame_error(header_with(16, {0}, control_header(FrameType::kPadding, 1)), "payload_bytes", 0, small);
  expect_frame_error(header_with(16, {0xE9, 0x03}, control_header(FrameType::kPadding, 1)), "payload_bytes", 1001,
                     small);
  expect_frame_error(header_with(12, {9}, control_header(FrameType::kPadding, 1)), "tag", 9);
}

TEST(Frame, ChecksHelloPayload) {
  auto hello = encode_hello({4, 77});
  EXPECT_EQ(decode_hello(hello).session_id, 77u);
  auto reserved = hello;
  reserved[5] = 1;
  EXPECT_THROW(decode_hello(reserved), FrameError);
  try {
    decode_hello(encode_hello({0, 77}));
    FAIL();
  } catch (const FrameError& error) {
    EXPECT_EQ(error.field(), "hello.world_size");
  }
  EXPECT_THROW(decode_hello(std::vector<uint8_t>(15)), FrameError);
}

TEST(Frame, ThrowingSinkPoisonsDecoder) {
  const auto bytes = encode_frame(data_header(0, 1), pattern(10, 1));
  FrameDecoder decoder;
  EXPECT_THROW(decoder.feed(bytes.data(), bytes.size(), [](Frame&&) { throw std::runtime_error("sink"); }),
               std::runtime_error);
  EXPECT_THROW(decoder.feed(bytes.data(), bytes.size(), [](Frame&&) {}), FrameError);
}

// Random bytes, mutated valid streams and random split points: the decoder
// either yields well-formed frames or throws FrameError; nothing else.
TEST(Frame, FuzzDecoderNeverMisbehaves) {
  std::mt19937_64 random(12345);
  const FrameLimits limits{4096, 16};
  int errors = 0;
  int frames_seen = 0;
  constexpr int kIterations = 60000;
  for (int iteration = 0; iteration < kIterations; ++iteration) {
    std::vector<uint8_t> stream;
    if (iteration % 4 == 0) {
      stream.resize(random() % 200);
      for (auto& byte : stream) byte = static_cast<uint8_t>(random());
    } else {
      const int count = 1 + static_cast<int>(random() % 4);
      for (int i = 0; i < count; ++i) {
        const auto type = static_cast<FrameType>(1 + random() % 4);
        std::vector<uint8_t> payload;
        if (type == FrameType::kData) payload = pattern(random() % 300, static_cast<uint8_t>(i));
        if (type == FrameType::kHello) payload = encode_hello({16, random()});
        const auto bytes = encode_frame(
            FrameHeader{type, static_cast<Rank>(random() % 16), type == FrameType::kData ? 5u : 0u, 0}, payload);
        stream.insert(stream.end(), bytes.begin(), bytes.end());
      }
      const int mutations = static_cast<int>(random() % 4);  // 0: must decode cleanly
      for (int m = 0; m < mutations && !stream.empty(); ++m) {
        stream[random() % stream.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
      }
      if (random() % 8 == 0 && !stream.empty()) stream.resize(random() % stream.size());
    }
    FrameDecoder decoder(limits);
    std::size_t offset = 0;
    try {
      while (offset < stream.size()) {
        const std::size_t piece = std::min<std::size_t>(1 + random() % 64, stream.size() - offset);
        decoder.feed(stream.data() + offset, piece, [&](Frame&& frame) {
          ASSERT_LE(frame.header.payload_bytes, limits.max_payload_bytes);
          ASSERT_EQ(frame.payload.size(), frame.header.payload_bytes);
          ASSERT_LT(frame.header.source, limits.world_size);
          ++frames_seen;
        });
        offset += piece;
      }
    } catch (const FrameError&) {
      ++errors;
    } catch (const std::exception& other) {
      FAIL() << "iteration " << iteration << ": unexpected exception " << other.what();
    }
  }
  // Both outcomes were exercised.
  EXPECT_GT(errors, kIterations / 4);
  EXPECT_GT(frames_seen, kIterations / 2);
}

}  // namespace
}  // namespace st::comm
