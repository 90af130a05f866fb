#pragma once
// The TCP transport's wire frame: a fixed 24-byte header, then the payload.
// All integers little-endian, no padding:
//
//   offset size field          meaning
//   0      4    magic          0x31465453 (the bytes "STF1")
//   4      1    version        1
//   5      1    type           1 data, 2 heartbeat, 3 hello, 4 goodbye,
//                              5 padding
//   6      2    flags          0 (reserved; anything else is rejected)
//   8      4    source         sending rank, int32, >= 0 (< world size when known)
//   12     4    tag            data: the message tag; other types: 0
//   16     8    payload_bytes  data: <= the configured maximum;
//                              padding: 1 to the configured maximum;
//                              hello: 16; heartbeat and goodbye: 0
//   24     ...  payload
//
// Padding: bytes that make the next data frame stand for a larger message
// (Transport::send_standing_for, a sampled timing run's messages): the
// receiver reads and drops them without storing them, and the data frame
// that follows carries their count in Message::wire_bytes. They go before
// it, so the message arrives when its whole size has crossed the wire.
//
// Hello payload (the handshake, both directions):
//   0 4 world_size (u32), 4 4 reserved (0), 8 8 session_id (u64)
//
// Nothing off the wire is trusted: the decoder validates every header field
// before it allocates the payload, so a corrupt or hostile length can never
// make it allocate more than the configured maximum. A malformed frame throws
// FrameError naming the field and its value; the connection is then dropped.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/comm/transport.h"

namespace st::comm {

constexpr uint32_t kFrameMagic = 0x31465453;  // "STF1" in wire order
constexpr uint8_t kFrameVersion = 1;
constexpr std::size_t kFrameHeaderBytes = 24;
constexpr std::size_t kHelloPayloadBytes = 16;
constexpr uint64_t kDefaultMaxPayloadBytes = uint64_t{1} << 30;  // 1 GiB

enum class FrameType : uint8_t { kData = 1, kHeartbeat = 2, kHello = 3, kGoodbye = 4, kPadding = 5 };

const char* frame_type_name(FrameType type);

struct FrameHeader {
  FrameType type = FrameType::kData;
  Rank source = 0;
  uint32_t tag = 0;
  uint64_t payload_bytes = 0;
};

struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
};

// A frame that breaks the format: field() is the header (or hello) field at
// fault, value() the offending value as received.
class FrameError : public std::runtime_error {
 public:
  FrameError(std::string field, uint64_t value, const std::string& problem);
  const std::string& field() const { return field_; }
  uint64_t value() const { return value_; }

 private:
  std::string field_;
  uint64_t value_;
};

// What a receiver accepts.
struct FrameLimits {
  uint64_t max_payload_bytes = kDefaultMaxPayloadBytes;  // data frames
  int world_size = 0;  // > 0: source must be below it; 0: any source >= 0
};

using HeaderBytes = std::array<uint8_t, kFrameHeaderBytes>;

HeaderBytes encode_header(const FrameHeader& header);

// Validates all fields against `limits`; throws FrameError.
FrameHeader decode_header(const uint8_t* bytes, const FrameLimits& limits);

// Header and payload in one buffer (tests, small control frames).
std::vector<uint8_t> encode_frame(const FrameHeader& header, const std::vector<uint8_t>& payload);

struct HelloInfo {
  uint32_t world_size = 0;
  uint64_t session_id = 0;  // chosen by rank 0 per job: stale peers are refused
};

std::vector<uint8_t> encode_hello(const HelloInfo& hello);
HelloInfo decode_hello(const std::vector<uint8_t>& payload);  // throws FrameError

// Reassembles frames from a byte stream cut at arbitrary points.
//
// feed() consumes every byte given and calls `sink` once per completed frame,
// in stream order. On a malformed header it throws FrameError; the stream is
// then unusable (framing is lost) and every later call throws again. An
// exception thrown by `sink` propagates too, and also poisons the decoder.
//
// For large payloads the caller may skip one copy: while a payload is being
// received, payload_space_size() is how many of its bytes are still missing
// and payload_space(n) readies the next n of them (at most that many) and
// returns where they go; read from the socket straight into it and call
// commit_payload() with the count received (at most n).
//
// A padding frame's payload is read into one scratch buffer, reused, and
// dropped: its frame reaches `sink` with an empty payload and the count in
// header.payload_bytes.
//
// The payload's memory is reserved when its header arrives but written
// (zero-filled, as std::vector must) only window by window, as
// payload_space() readies it. Zero-filling a 100 MB message at once costs
// its page faults in one go (about 0.5 s at these VMs' 0.2 GB/s
// first-touch rate, more under CPU load), and the TCP transport's io thread,
// which decodes, would serve no socket and no timer meanwhile: its peer
// sees silence and, past peer_timeout, fails the connection.
class FrameDecoder {
 public:
  using FrameSink = std::function<void(Frame&& frame)>;

  explicit FrameDecoder(FrameLimits limits = {});

  void feed(const uint8_t* data, std::size_t size, const FrameSink& sink);

  uint8_t* payload_space(std::size_t bytes);  // nullptr between payloads
  std::size_t payload_space_size() const;
  void commit_payload(std::size_t bytes, const FrameSink& sink);

  // True between frames (no partial header or payload held).
  bool at_frame_boundary() const { return header_filled_ == 0 && !in_payload_; }

 private:
  void check_usable() const;
  std::size_t take_header_bytes(const uint8_t* data, std::size_t size, const FrameSink& sink);
  void start_frame(const FrameSink& sink);
  void finish_frame(const FrameSink& sink);

  FrameLimits limits_;
  HeaderBytes header_bytes_{};
  std::size_t header_filled_ = 0;
  bool in_payload_ = false;
  Frame frame_;  // payload: capacity for the whole, size() = bytes readied so far
  // A padding frame's payload goes into scratch_ and is dropped.
  bool discarding() const { return frame_.header.type == FrameType::kPadding; }
  std::vector<uint8_t> scratch_;
  std::size_t scratch_ready_ = 0;  // bytes of scratch_ the last payload_space() readied
  std::size_t payload_expected_ = 0;
  std::size_t payload_filled_ = 0;
  bool poisoned_ = false;
  uint64_t frames_decoded_ = 0;
};

}  // namespace st::comm
