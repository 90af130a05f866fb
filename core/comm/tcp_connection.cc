#include "core/comm/tcp_connection.h"

#include <algorithm>

#include <fmt/format.h>

namespace st::comm::detail {
namespace {

// Small reads land in a staging buffer and are parsed from there; the rest of
// a large payload is read straight into the message (one copy less).
constexpr std::size_t kReadBufferBytes = 256 * 1024;
constexpr std::size_t kDirectReadThreshold = 64 * 1024;
// A direct read readies (zero-fills) at most this much of the payload at a
// time, so that a large message's page faults are spread over many short
// handlers instead of stalling the io thread in one (frame.h).
constexpr std::size_t kMaxDirectReadBytes = 8 * 1024 * 1024;
// One gather write carries at most this many queued frames (two buffers each;
// Linux takes up to 1024 iovecs per writev).
constexpr std::size_t kMaxFramesPerWrite = 64;
// Asio's transfer_all caps each writev at 64 KiB; on loopback, 1 MiB writes
// move data about twice as fast (iperf3 here: 1.9 vs 4.7 GB/s). Larger
// requests simply return partial counts once the socket buffer is full.
constexpr std::size_t kMaxBytesPerWriteCall = 16 * 1024 * 1024;

std::size_t transfer_all_in_large_writes(const std::error_code& error, std::size_t /*bytes_so_far*/) {
  return error ? 0 : kMaxBytesPerWriteCall;
}

SteadyTime now() { return std::chrono::steady_clock::now(); }

}  // namespace

OutgoingFrame make_control_frame(FrameType type, Rank source, std::vector<uint8_t> payload) {
  FrameHeader header;
  header.type = type;
  header.source = source;
  header.payload_bytes = payload.size();
  return OutgoingFrame{encode_header(header), std::move(payload), nullptr};
}

OutgoingFrame make_padding_frame(Rank source, uint64_t bytes) {
  FrameHeader header;
  header.type = FrameType::kPadding;
  header.source = source;
  header.payload_bytes = bytes;
  OutgoingFrame frame{encode_header(header), {}, nullptr};
  frame.zero_bytes = bytes;
  return frame;
}

std::string endpoint_string(const asio::ip::tcp::socket& socket) {
  std::error_code error;
  const auto endpoint = socket.remote_endpoint(error);
  if (error) return "?";
  return fmt::format("{}:{}", endpoint.address().to_string(), endpoint.port());
}

TcpConnection::TcpConnection(asio::ip::tcp::socket socket, FrameLimits limits, ConnectionOwner& owner)
    : opened_at(now()),
      last_received(opened_at),
      last_written(opened_at),
      socket_(std::move(socket)),
      owner_(owner),
      decoder_(limits),
      read_buffer_(kReadBufferBytes),
      remote_address_(endpoint_string(socket_)) {}

void TcpConnection::start() { read_next(); }

void TcpConnection::read_next() {
  auto self = shared_from_this();
  if (decoder_.payload_space_size() >= kDirectReadThreshold) {
    const std::size_t window = std::min(decoder_.payload_space_size(), kMaxDirectReadBytes);
    socket_.async_read_some(asio::buffer(decoder_.payload_space(window), window),
                            [self](const std::error_code& error, std::size_t bytes) {
                              self->on_read(error, bytes, /*into_payload=*/true);
                            });
    return;
  }
  socket_.async_read_some(asio::buffer(read_buffer_), [self](const std::error_code& error, std::size_t bytes) {
    self->on_read(error, bytes, /*into_payload=*/false);
  });
}

void TcpConnection::on_read(const std::error_code& error, std::size_t bytes, bool into_payload) {
  if (!open_) return;  // we closed it; the aborted read has nothing to say
  if (error) {
    lose(error == asio::error::eof ? std::string("connection closed by the peer (EOF)")
                                   : "read failed: " + error.message());
    return;
  }
  last_received = now();
  auto self = shared_from_this();
  const FrameDecoder::FrameSink sink = [this, &self](Frame&& frame) { owner_.on_frame(self, std::move(frame)); };
  try {
    if (into_payload) {
      decoder_.commit_payload(bytes, sink);
    } else {
      decoder_.feed(read_buffer_.data(), bytes, sink);
    }
  } catch (const FrameError& bad_frame) {
    lose(bad_frame.what());
    return;
  }
  if (open_) read_next();
}

void TcpConnection::enqueue(OutgoingFrame frame) {
  if (!open_) {
    std::deque<OutgoingFrame> refused;
    refused.push_back(std::move(frame));
    complete(refused, failure_);
    return;
  }
  queue_.push_back(std::move(frame));
  write_next();
}

namespace {

// A padding frame's payload: this block, given to the socket as often as the
// frame needs (writes only read it).
constexpr std::size_t kZeroBlockBytes = std::size_t{1} << 20;

void add_zeros(std::vector<asio::const_buffer>& buffers, uint64_t bytes) {
  static const std::vector<uint8_t> zeros(kZeroBlockBytes, 0);
  while (bytes > 0) {
    const std::size_t block = static_cast<std::size_t>(std::min<uint64_t>(bytes, kZeroBlockBytes));
    buffers.emplace_back(asio::buffer(zeros.data(), block));
    bytes -= block;
  }
}

}  // namespace

void TcpConnection::write_next() {
  if (writing_ || !open_) return;
  if (queue_.empty()) {
    if (shutdown_requested_) {
      shutdown_requested_ = false;
      std::error_code ignored;
      socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    }
    return;
  }
  // Scatter/gather: headers and payloads go out as they are, never copied
  // into one bigger buffer.
  std::vector<asio::const_buffer> buffers;
  const std::size_t frames = std::min(queue_.size(), kMaxFramesPerWrite);
  buffers.reserve(2 * frames);
  for (std::size_t i = 0; i < frames; ++i) {
    buffers.emplace_back(asio::buffer(queue_[i].header));
    if (!queue_[i].payload.empty()) buffers.emplace_back(asio::buffer(queue_[i].payload));
    add_zeros(buffers, queue_[i].zero_bytes);
  }
  in_flight_ = frames;
  writing_ = true;
  auto self = shared_from_this();
  asio::async_write(socket_, buffers, transfer_all_in_large_writes,
                    [self, frames](const std::error_code& error, std::size_t) { self->on_written(error, frames); });
}

void TcpConnection::on_written(const std::error_code& error, std::size_t frames) {
  writing_ = false;
  std::deque<OutgoingFrame> written;
  for (std::size_t i = 0; i < frames; ++i) {
    written.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  in_flight_ = 0;
  if (error) {
    if (open_) lose("write failed: " + error.message());
    complete(written, failure_);
    return;
  }
  last_written = now();
  write_next();
  complete(written, nullptr);
}

void TcpConnection::lose(const std::string& reason) {
  if (!open_) return;
  fail(owner_.on_connection_lost(shared_from_this(), reason));
}

void TcpConnection::fail(const std::exception_ptr& error) {
  if (!failure_) failure_ = error;
  close_socket();
  drop_queued(failure_);  // in-flight frames complete in on_written
}

void TcpConnection::drop_queued(const std::exception_ptr& error) {
  std::deque<OutgoingFrame> dropped;
  while (queue_.size() > in_flight_) {
    dropped.push_front(std::move(queue_.back()));
    queue_.pop_back();
  }
  complete(dropped, error);
}

bool TcpConnection::has_pending_sends() const {
  return std::any_of(queue_.begin(), queue_.end(), [](const OutgoingFrame& frame) { return bool(frame.on_done); });
}

std::size_t TcpConnection::unread_bytes() const {
  if (!open_) return 0;
  std::error_code error;
  const std::size_t bytes = socket_.available(error);
  return error ? 0 : bytes;
}

void TcpConnection::shutdown_after_writes() {
  shutdown_requested_ = true;
  write_next();
}

void TcpConnection::complete(std::deque<OutgoingFrame>& frames, const std::exception_ptr& error) {
  for (auto& frame : frames) {
    if (frame.on_done) frame.on_done(error);
  }
}

void TcpConnection::close_socket() {
  if (!open_) return;
  open_ = false;
  std::error_code ignored;
  socket_.close(ignored);
}

}  // namespace st::comm::detail
