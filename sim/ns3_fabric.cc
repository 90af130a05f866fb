#include "sim/ns3_fabric.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace st::sim {

using comm::Rank;
using comm::TransportError;

Ns3Fabric::Ns3Fabric(FabricConfig config)
    : config_(std::move(config)),
      endpoints_(static_cast<int>(config_.nodes.size()), "ns-3 transport"),
      listeners_(config_.nodes.size()) {
  const auto world = static_cast<std::size_t>(world_size());
  if (config_.tcp_type_names.size() != world * world)
    throw std::invalid_argument("ns-3 fabric: one congestion control name per ordered pair is needed");
  pairs_.resize(world * world);
}

// --- connections -----------------------------------------------------------

void Ns3Fabric::start() {
  for (Rank rank = 0; rank < world_size(); ++rank) listen(rank);
  for (Rank from = 0; from < world_size(); ++from)
    for (Rank to = 0; to < world_size(); ++to)
      if (from != to) connect(from, to);
}

void Ns3Fabric::configure_socket(ns3::Ptr<ns3::Socket> socket, const std::string& tcp_type_name) const {
  socket->SetAttribute("SegmentSize", ns3::UintegerValue(config_.segment_bytes));
  socket->SetAttribute("SndBufSize", ns3::UintegerValue(config_.socket_buffer_bytes));
  socket->SetAttribute("RcvBufSize", ns3::UintegerValue(config_.socket_buffer_bytes));
  socket->SetAttribute("MinRto", ns3::TimeValue(ns3::Seconds(config_.timers.min_rto_s)));
  socket->SetAttribute("ClockGranularity", ns3::TimeValue(ns3::Seconds(config_.timers.clock_granularity_s)));
  socket->SetAttribute("DelAckTimeout", ns3::TimeValue(ns3::Seconds(config_.timers.delayed_ack_timeout_s)));
  // BBR models a paced sender; the others are ACK-clocked as usual.
  if (tcp_type_name == "ns3::TcpBbr") ns3::DynamicCast<ns3::TcpSocketBase>(socket)->SetPacingStatus(true);
}

void Ns3Fabric::listen(Rank rank) {
  ns3::Ptr<ns3::Socket>& listener = listeners_[static_cast<std::size_t>(rank)];
  listener = ns3::Socket::CreateSocket(config_.nodes[rank].node, ns3::TcpSocketFactory::GetTypeId());
  configure_socket(listener, "");  // accepted sockets inherit sizes; they only send ACKs
  listener->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), config_.port));
  listener->Listen();
  listener->SetAcceptCallback(
      ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
      ns3::Callback<void, ns3::Ptr<ns3::Socket>, const ns3::Address&>(
          [this, rank](ns3::Ptr<ns3::Socket> socket, const ns3::Address& peer) { accept(rank, socket, peer); }));
}

void Ns3Fabric::connect(Rank from, Rank to) {
  const std::string& type = config_.tcp_type_names[static_cast<std::size_t>(from) * world_size() + to];
  auto tcp = config_.nodes[from].node->GetObject<ns3::TcpL4Protocol>();
  Pair& link = pair(from, to);
  link.socket = tcp->CreateSocket(ns3::TypeId::LookupByName(type));
  configure_socket(link.socket, type);
  link.socket->Bind();
  link.socket->SetConnectCallback(
      ns3::Callback<void, ns3::Ptr<ns3::Socket>>([this, from, to](ns3::Ptr<ns3::Socket>) {
        pair(from, to).connected = true;
        pump(from, to);
      }),
      ns3::Callback<void, ns3::Ptr<ns3::Socket>>(
          [this, from, to](ns3::Ptr<ns3::Socket>) { connection_failed(from, to, "connection failed"); }));
  link.socket->SetSendCallback(
      ns3::Callback<void, ns3::Ptr<ns3::Socket>, uint32_t>([this, from, to](ns3::Ptr<ns3::Socket>, uint32_t) {
        pump(from, to);
      }));
  link.socket->SetCloseCallbacks(
      ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
      ns3::Callback<void, ns3::Ptr<ns3::Socket>>(
          [this, from, to](ns3::Ptr<ns3::Socket>) { connection_failed(from, to, "connection reset"); }));
  link.socket->Connect(ns3::InetSocketAddress(config_.nodes[to].address, config_.port));
}

void Ns3Fabric::accept(Rank to, ns3::Ptr<ns3::Socket> socket, const ns3::Address& peer) {
  const ns3::Ipv4Address address = ns3::InetSocketAddress::ConvertFrom(peer).GetIpv4();
  const auto node = std::find_if(config_.nodes.begin(), config_.nodes.end(),
                                 [&](const FabricNode& candidate) { return candidate.address == address; });
  if (node == config_.nodes.end()) {  // not one of ours: nothing else listens on this port
    socket->Close();
    return;
  }
  const Rank from = static_cast<Rank>(node - config_.nodes.begin());
  pair(from, to).receiver = socket;
  socket->SetRecvCallback(
      ns3::Callback<void, ns3::Ptr<ns3::Socket>>([this, from, to](ns3::Ptr<ns3::Socket> s) { read(from, to, s); }));
  socket->SetCloseCallbacks(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>(),
                            ns3::Callback<void, ns3::Ptr<ns3::Socket>>([this, from, to](ns3::Ptr<ns3::Socket>) {
                              connection_failed(from, to, "connection reset");
                            }));
  read(from, to, socket);  // in case data came with the handshake's last ACK
}

void Ns3Fabric::detach() {
  const auto null_socket = ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>>();
  for (Pair& link : pairs_) {
    if (link.socket) {
      link.socket->SetConnectCallback(null_socket, null_socket);
      link.socket->SetSendCallback(ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, uint32_t>());
      link.socket->SetCloseCallbacks(null_socket, null_socket);
    }
    if (link.receiver) {
      link.receiver->SetRecvCallback(null_socket);
      link.receiver->SetCloseCallbacks(null_socket, null_socket);
    }
  }
  for (const auto& listener : listeners_)
    if (listener)
      listener->SetAcceptCallback(ns3::MakeNullCallback<bool, ns3::Ptr<ns3::Socket>, const ns3::Address&>(),
                                           ns3::MakeNullCallback<void, ns3::Ptr<ns3::Socket>, const ns3::Address&>());
}

// --- data ------------------------------------------------------------------

void Ns3Fabric::send(Rank from, Rank to, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                     comm::SendCallback on_done) {
  check_rank(from, "source rank");
  check_rank(to, "destination rank");
  if (endpoints_.closed(from)) {
    const std::string why = endpoints_.is_closed_message(from);
    complete_later(from, std::move(on_done), std::make_exception_ptr(TransportError(from, why)), 0);
    return;
  }
  if (from == to) return send_to_self(from, tag, std::move(payload), wire_bytes, std::move(on_done));
  Pair& link = pair(from, to);
  if (endpoints_.closed(to) || link.failed) {
    const std::string why = endpoints_.closed(to) ? endpoints_.left_message(to)
                                                  : fmt::format("ns-3 transport: connection {} -> {} failed", from, to);
    complete_later(from, std::move(on_done), std::make_exception_ptr(TransportError(to, why)), 0);
    report_later(from, to, why);
    return;
  }
  const uint64_t stream_bytes = kFrameHeaderBytes + wire_bytes;
  link.stream_queued += stream_bytes;
  link.arriving.push_back(Arriving{link.stream_queued, std::make_shared<comm::Message>(
                                                           message_of(from, tag, std::move(payload), wire_bytes))});
  link.outgoing.push_back(Outgoing{stream_bytes, 0, wire_bytes, std::move(on_done)});
  pump(from, to);
}

void Ns3Fabric::send_to_self(Rank rank, uint32_t tag, std::vector<uint8_t> payload, uint64_t wire_bytes,
                             comm::SendCallback on_done) {
  auto message = std::make_shared<comm::Message>(message_of(rank, tag, std::move(payload), wire_bytes));
  complete_later(rank, std::move(on_done), nullptr, wire_bytes);
  deliver_later(rank, std::move(message));
}

// Hands as much of the queued messages to TCP as its buffer takes; the send
// callback (buffer space freed by ACKs) calls this again.
void Ns3Fabric::pump(Rank from, Rank to) {
  Pair& link = pair(from, to);
  if (!link.connected || link.failed || endpoints_.closed(from)) return;
  while (!link.outgoing.empty()) {
    Outgoing& message = link.outgoing.front();
    const uint32_t available = link.socket->GetTxAvailable();
    if (available == 0) return;
    const auto chunk = static_cast<uint32_t>(std::min<uint64_t>(message.stream_bytes - message.handed, available));
    // A zero-filled virtual packet: ns-3 allocates nothing for its bytes.
    const int taken = link.socket->Send(ns3::Create<ns3::Packet>(chunk));
    if (taken <= 0) return;
    message.handed += static_cast<uint64_t>(taken);
    if (message.handed < message.stream_bytes) continue;
    complete_later(from, std::move(message.on_done), nullptr, message.payload_bytes);
    link.outgoing.pop_front();
  }
}

// Drains the socket, counting in-order bytes; every message whose last byte
// is in is delivered.
void Ns3Fabric::read(Rank from, Rank to, ns3::Ptr<ns3::Socket> socket) {
  Pair& link = pair(from, to);
  while (ns3::Ptr<ns3::Packet> packet = socket->Recv()) {
    if (packet->GetSize() == 0) break;
    link.stream_received += packet->GetSize();
  }
  while (!link.arriving.empty() && link.arriving.front().stream_end <= link.stream_received) {
    deliver_later(to, std::move(link.arriving.front().message));
    link.arriving.pop_front();
  }
}

// --- failures and close ----------------------------------------------------

// Sends of `from` to `to` that are not fully handed to TCP fail; their
// payloads will never be delivered (their bytes, if partly handed, are the
// stream's last ones, since nothing more is sent on the pair).
void Ns3Fabric::fail_outgoing(Rank from, Rank to, Rank blamed, const std::string& why, bool report) {
  Pair& link = pair(from, to);
  if (link.outgoing.empty()) return;
  const std::size_t count = std::min(link.outgoing.size(), link.arriving.size());
  link.arriving.erase(link.arriving.end() - static_cast<std::ptrdiff_t>(count), link.arriving.end());
  for (Outgoing& message : link.outgoing)
    complete_later(from, std::move(message.on_done), std::make_exception_ptr(TransportError(blamed, why)), 0);
  link.outgoing.clear();
  if (report) report_later(from, blamed, why);
}

void Ns3Fabric::connection_failed(Rank from, Rank to, const std::string& why) {
  Pair& link = pair(from, to);
  if (link.failed) return;
  link.failed = true;
  // A connection refused or reset because one end closed is that close's
  // consequence, not a failure: only sends to the leaver are reported.
  const Rank closed = endpoints_.closed(to) ? to : endpoints_.closed(from) ? from : -1;
  if (closed >= 0) {
    fail_outgoing(from, to, closed, endpoints_.left_message(closed), true);
    return;
  }
  const std::string what = fmt::format("ns-3 transport: {} (rank {} -> rank {})", why, from, to);
  fail_outgoing(from, to, to, what, false);
  report_later(from, to, what);
  report_later(to, from, what);
}

void Ns3Fabric::close(Rank rank) {
  if (!endpoints_.close(rank)) return;
  const std::string closed = endpoints_.is_closed_message(rank);
  const std::string left = endpoints_.left_message(rank);
  for (Rank peer = 0; peer < world_size(); ++peer) {
    if (peer == rank) continue;
    fail_outgoing(rank, peer, rank, closed, false);
    if (pair(rank, peer).socket) pair(rank, peer).socket->Close();  // graceful: handed bytes still arrive
    fail_outgoing(peer, rank, rank, left, true);
  }
  if (listeners_[static_cast<std::size_t>(rank)]) listeners_[static_cast<std::size_t>(rank)]->Close();
}

// --- user callbacks, always deferred (FabricEndpoints says what they do) ----

void Ns3Fabric::complete_later(Rank rank, comm::SendCallback on_done, std::exception_ptr error,
                               uint64_t payload_bytes) {
  if (!error) endpoints_.count_sent(rank, payload_bytes);
  if (!on_done) return;
  std::weak_ptr<Ns3Fabric> weak = weak_from_this();
  ns3::Simulator::ScheduleNow([weak, on_done = std::move(on_done), error]() {
    if (weak.lock()) on_done(error);
  });
}

void Ns3Fabric::deliver_later(Rank to, std::shared_ptr<comm::Message> message) {
  std::weak_ptr<Ns3Fabric> weak = weak_from_this();
  ns3::Simulator::ScheduleNow([weak, to, message]() {
    if (auto self = weak.lock()) self->endpoints_.deliver(to, std::move(*message));
  });
}

void Ns3Fabric::report_later(Rank rank, Rank peer, const std::string& what) {
  if (!endpoints_.first_report(rank, peer)) return;
  std::weak_ptr<Ns3Fabric> weak = weak_from_this();
  ns3::Simulator::ScheduleNow([weak, rank, peer, what]() {
    if (auto self = weak.lock()) self->endpoints_.report(rank, peer, what);
  });
}

// --- accessors -------------------------------------------------------------

void Ns3Fabric::set_receive_handler(Rank rank, comm::ReceiveHandler handler) {
  endpoints_.set_receive_handler(rank, std::move(handler));
}

void Ns3Fabric::set_error_handler(Rank rank, comm::ErrorHandler handler) {
  endpoints_.set_error_handler(rank, std::move(handler));
}

comm::TransportStats Ns3Fabric::stats(Rank rank) const { return endpoints_.stats(rank); }

uint64_t Ns3Fabric::stream_bytes(Rank from, Rank to) const {
  check_rank(from, "source rank");
  check_rank(to, "destination rank");
  return pair(from, to).stream_received;
}

uint64_t Ns3Fabric::dropped_messages(Rank rank) const { return endpoints_.dropped_messages(rank); }

}  // namespace st::sim
