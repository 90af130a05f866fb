#include "core/comm/frame.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace st::comm {
namespace {

// Explicit byte order: the layout is little-endian on every host.
void put_u16(uint8_t* out, uint16_t value) {
  out[0] = static_cast<uint8_t>(value);
  out[1] = static_cast<uint8_t>(value >> 8);
}

void put_u32(uint8_t* out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

void put_u64(uint8_t* out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint16_t get_u16(const uint8_t* in) { return static_cast<uint16_t>(in[0] | (in[1] << 8)); }

uint32_t get_u32(const uint8_t* in) {
  uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

uint64_t get_u64(const uint8_t* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

bool is_known_type(uint8_t type) {
  return type >= static_cast<uint8_t>(FrameType::kData) && type <= static_cast<uint8_t>(FrameType::kPadding);
}

// The only payload size a control frame may carry.
uint64_t control_payload_bytes(FrameType type) {
  return type == FrameType::kHello ? kHelloPayloadBytes : 0;
}

}  // namespace

const char* frame_type_name(FrameType type) {
  switch (type) {
    case FrameType::kData: return "data";
    case FrameType::kHeartbeat: return "heartbeat";
    case FrameType::kHello: return "hello";
    case FrameType::kGoodbye: return "goodbye";
    case FrameType::kPadding: return "padding";
  }
  return "unknown";
}

FrameError::FrameError(std::string field, uint64_t value, const std::string& problem)
    : std::runtime_error(fmt::format("bad frame: {} = {}: {}", field, value, problem)),
      field_(std::move(field)),
      value_(value) {}

HeaderBytes encode_header(const FrameHeader& header) {
  HeaderBytes bytes{};
  put_u32(&bytes[0], kFrameMagic);
  bytes[4] = kFrameVersion;
  bytes[5] = static_cast<uint8_t>(header.type);
  put_u16(&bytes[6], 0);
  put_u32(&bytes[8], static_cast<uint32_t>(header.source));
  put_u32(&bytes[12], header.tag);
  put_u64(&bytes[16], header.payload_bytes);
  return bytes;
}

FrameHeader decode_header(const uint8_t* bytes, const FrameLimits& limits) {
  const uint32_t magic = get_u32(&bytes[0]);
  if (magic != kFrameMagic) {
    throw FrameError("magic", magic, fmt::format("expected {:#x} (not a StellaTrain peer?)", kFrameMagic));
  }
  if (bytes[4] != kFrameVersion) {
    throw FrameError("version", bytes[4], fmt::format("this build speaks version {}", kFrameVersion));
  }
  if (!is_known_type(bytes[5])) throw FrameError("type", bytes[5], "expected 1 (data) to 5 (padding)");
  const uint16_t flags = get_u16(&bytes[6]);
  if (flags != 0) throw FrameError("flags", flags, "reserved, must be 0");

  FrameHeader header;
  header.type = static_cast<FrameType>(bytes[5]);
  const uint32_t source = get_u32(&bytes[8]);
  header.source = static_cast<Rank>(source);
  if (header.source < 0 || (limits.world_size > 0 && header.source >= limits.world_size)) {
    throw FrameError("source", source, fmt::format("not a rank of a world of size {}", limits.world_size));
  }
  header.tag = get_u32(&bytes[12]);
  header.payload_bytes = get_u64(&bytes[16]);

  if (header.type == FrameType::kData) {
    if (header.payload_bytes > limits.max_payload_bytes) {
      throw FrameError("payload_bytes", header.payload_bytes,
                       fmt::format("above the maximum message size {}", limits.max_payload_bytes));
    }
    return header;
  }
  if (header.tag != 0) {
    throw FrameError("tag", header.tag, fmt::format("must be 0 in a {} frame", frame_type_name(header.type)));
  }
  if (header.type == FrameType::kPadding) {
    if (header.payload_bytes == 0 || header.payload_bytes > limits.max_payload_bytes) {
      throw FrameError("payload_bytes", header.payload_bytes,
                       fmt::format("a padding frame carries 1 to {} bytes", limits.max_payload_bytes));
    }
    return header;
  }
  if (header.payload_bytes != control_payload_bytes(header.type)) {
    throw FrameError("payload_bytes", header.payload_bytes,
                     fmt::format("a {} frame carries exactly {} bytes", frame_type_name(header.type),
                                 control_payload_bytes(header.type)));
  }
  return header;
}

std::vector<uint8_t> encode_frame(const FrameHeader& header, const std::vector<uint8_t>& payload) {
  FrameHeader sized = header;
  sized.payload_bytes = payload.size();
  const HeaderBytes head = encode_header(sized);
  std::vector<uint8_t> bytes(kFrameHeaderBytes + payload.size());
  std::memcpy(bytes.data(), head.data(), kFrameHeaderBytes);
  if (!payload.empty()) std::memcpy(bytes.data() + kFrameHeaderBytes, payload.data(), payload.size());
  return bytes;
}

std::vector<uint8_t> encode_hello(const HelloInfo& hello) {
  std::vector<uint8_t> payload(kHelloPayloadBytes, 0);
  put_u32(&payload[0], hello.world_size);
  put_u64(&payload[8], hello.session_id);
  return payload;
}

HelloInfo decode_hello(const std::vector<uint8_t>& payload) {
  if (payload.size() != kHelloPayloadBytes) {
    throw FrameError("hello.size", payload.size(), fmt::format("a hello carries {} bytes", kHelloPayloadBytes));
  }
  const uint32_t reserved = get_u32(&payload[4]);
  if (reserved != 0) throw FrameError("hello.reserved", reserved, "must be 0");
  HelloInfo hello;
  hello.world_size = get_u32(&payload[0]);
  hello.session_id = get_u64(&payload[8]);
  if (hello.world_size == 0) throw FrameError("hello.world_size", 0, "must be at least 1");
  return hello;
}

// --- FrameDecoder -----------------------------------------------------------

FrameDecoder::FrameDecoder(FrameLimits limits) : limits_(limits) {}

void FrameDecoder::check_usable() const {
  if (poisoned_) throw FrameError("stream", frames_decoded_, "decoder used after an error; drop the connection");
}

void FrameDecoder::feed(const uint8_t* data, std::size_t size, const FrameSink& sink) {
  check_usable();
  while (size > 0) {
    if (!in_payload_) {
      const std::size_t used = take_header_bytes(data, size, sink);
      data += used;
      size -= used;
      continue;
    }
    const std::size_t used = std::min(size, payload_space_size());
    std::memcpy(payload_space(used), data, used);
    data += used;
    size -= used;
    commit_payload(used, sink);
  }
}

std::size_t FrameDecoder::take_header_bytes(const uint8_t* data, std::size_t size, const FrameSink& sink) {
  const std::size_t used = std::min(size, kFrameHeaderBytes - header_filled_);
  std::memcpy(header_bytes_.data() + header_filled_, data, used);
  header_filled_ += used;
  if (header_filled_ == kFrameHeaderBytes) start_frame(sink);
  return used;
}

void FrameDecoder::start_frame(const FrameSink& sink) {
  poisoned_ = true;  // cleared once the header has passed every check
  frame_ = Frame{};
  frame_.header = decode_header(header_bytes_.data(), limits_);
  // Allocation happens only here, after decode_header bounded the length;
  // the bytes are written later, as payload_space() readies them.
  if (!discarding()) frame_.payload.reserve(frame_.header.payload_bytes);
  payload_expected_ = frame_.header.payload_bytes;
  header_filled_ = 0;
  payload_filled_ = 0;
  in_payload_ = true;
  poisoned_ = false;
  if (payload_expected_ == 0) finish_frame(sink);
}

uint8_t* FrameDecoder::payload_space(std::size_t bytes) {
  if (!in_payload_) return nullptr;
  if (discarding()) {
    // Scratch as large as the largest window asked for; what is read into
    // it is never looked at.
    const std::size_t window = std::min(bytes, payload_space_size());
    if (scratch_.size() < window) scratch_.resize(window);
    scratch_ready_ = window;
    return scratch_.data();
  }
  const std::size_t readied = payload_filled_ + std::min(bytes, payload_space_size());
  // Within the reserved capacity: no reallocation, only these bytes written.
  if (frame_.payload.size() < readied) frame_.payload.resize(readied);
  return frame_.payload.data() + payload_filled_;
}

std::size_t FrameDecoder::payload_space_size() const {
  return in_payload_ ? payload_expected_ - payload_filled_ : 0;
}

void FrameDecoder::commit_payload(std::size_t bytes, const FrameSink& sink) {
  check_usable();
  const std::size_t readied =
      !in_payload_ ? 0 : (discarding() ? scratch_ready_ : frame_.payload.size() - payload_filled_);
  if (bytes > readied) {
    poisoned_ = true;
    throw FrameError("commit", bytes, "more bytes committed than payload_space() readied");
  }
  if (discarding()) scratch_ready_ -= bytes;
  payload_filled_ += bytes;
  if (in_payload_ && payload_filled_ == payload_expected_) finish_frame(sink);
}

void FrameDecoder::finish_frame(const FrameSink& sink) {
  in_payload_ = false;
  ++frames_decoded_;
  poisoned_ = true;  // a throwing sink leaves the stream in an unknown state
  sink(std::move(frame_));
  poisoned_ = false;
}

}  // namespace st::comm
