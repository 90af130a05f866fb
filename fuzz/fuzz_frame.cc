// The TCP transport's frame decoder on arbitrary byte streams.
//
// Input layout: byte 0 picks the chunk size the stream is cut into (the
// socket hands the decoder arbitrary pieces), byte 1 the world size the
// receiver knows (0: unknown); the rest is the stream. Every frame that
// decodes must re-encode to the same bytes, and hello payloads go through
// decode_hello as the handshake does.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/comm/frame.h"
#include "fuzz/fuzz_expected_errors.h"

using st::comm::Frame;
using st::comm::FrameDecoder;
using st::comm::FrameError;
using st::comm::FrameType;

namespace {

// Small enough that a hostile length cannot make the fuzzer allocate much,
// large enough for the seed frames.
constexpr uint64_t kMaxPayload = 1 << 16;

void check_round_trip(const Frame& frame) {
  // A padding frame's payload is dropped as it is read: only its count stays.
  const bool padding = frame.header.type == FrameType::kPadding;
  if (padding && !frame.payload.empty()) throw std::logic_error("a padding frame kept its payload");
  const uint64_t payload_bytes = padding ? frame.header.payload_bytes : frame.payload.size();
  const auto head = st::comm::encode_header(frame.header);
  const auto bytes = padding ? std::vector<uint8_t>(head.begin(), head.end())
                             : st::comm::encode_frame(frame.header, frame.payload);
  const auto again = st::comm::decode_header(bytes.data(), {kMaxPayload, 0});
  if (again.type != frame.header.type || again.source != frame.header.source || again.tag != frame.header.tag ||
      again.payload_bytes != payload_bytes)
    throw std::logic_error("a decoded frame does not re-encode to the same header");
  if (frame.header.type == FrameType::kHello) {
    try {
      (void)st::comm::decode_hello(frame.payload);
    } catch (const FrameError&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t chunk = std::size_t{data[0]} + 1;
  st::comm::FrameLimits limits{kMaxPayload, data[1] % 9};
  data += 2;
  size -= 2;
  FrameDecoder decoder(limits);
  const auto sink = [](Frame&& frame) { check_round_trip(frame); };
  try {
    for (std::size_t at = 0; at < size; at += chunk) {
      const std::size_t piece = std::min(chunk, size - at);
      // Alternate the copying and the zero-copy paths, as the transport may.
      if ((at / chunk) % 2 == 1 && decoder.payload_space_size() > 0) {
        const std::size_t n = std::min(piece, decoder.payload_space_size());
        std::memcpy(decoder.payload_space(n), data + at, n);
        decoder.commit_payload(n, sink);
        if (n < piece) decoder.feed(data + at + n, piece - n, sink);
      } else {
        decoder.feed(data + at, piece, sink);
      }
    }
  } catch (const FrameError&) {
    // A malformed frame: the documented outcome. The decoder must stay
    // poisoned rather than resynchronise on garbage.
    try {
      const uint8_t byte = 0;
      decoder.feed(&byte, 1, sink);
    } catch (const FrameError&) {
      return 0;
    }
    throw std::logic_error("the decoder accepted bytes after a malformed frame");
  }
  return 0;
}
