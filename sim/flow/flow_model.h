#pragma once
// The flow-level network model (docs/sim-flow.md): byte streams over links,
// sharing each link max-min, with TCP's window reduced to what decides how
// long a transfer takes. No packets and no clock of its own: the caller
// (sim/flow/flow_network.h) moves it to each event time it asks for, so the
// model is plain C++, testable alone, and deterministic.
//
// Why not SimGrid, the library for exactly this: SimGrid 3.32 (Debian) was
// tried on one traced 20 ms link; a flow there never ran faster than the
// link's bandwidth when it started, a bandwidth step during a flow's latency
// phase deadlocked its default model, and a running flow ignored a 0 Mbps
// step. Working around that (restarting every flow at each trace step) and
// adding what it lacks (TCP's slow start rounds, idle restarts, ACK share,
// timeouts after outages) left little of it in use; the model below is
// those parts alone.
//
// What is modelled, per connection (one per ordered node pair, persistent):
// * Max-min sharing: every link's wire rate is shared max-min between the
//   connections crossing it (progressive filling), each packet paying
//   `header_bytes` on top of its payload, and each connection's ACKs
//   (header_bytes per `segments_per_ack` segments) taking their share of
//   the reverse path.
// * The window: the stream advances in rounds of one RTT. In slow start a
//   round may pass at most cwnd bytes (at the link's share), and cwnd grows
//   by what the round passed (doubling when the window is the limit).
// * Overshoot loss (`overshoot_loss`, as ns-3's Cubic behaves): slow start
//   goes on until cwnd exceeds the pipe (the connection's share of BDP +
//   bottleneck buffer); the excess is lost and crosses again, cwnd drops by
//   `cubic_beta`, and from then on the connection takes its whole share
//   (congestion avoidance; the socket buffer is >= 4 BDP). A burst from a
//   window larger than the pipe loses its excess at once. Without it, slow
//   start ends, losslessly, in the first round that stays backlogged
//   without using its window up.
// * Both directions loaded: a connection in congestion avoidance whose ACK
//   path crosses a standing queue of data (at that data's bottleneck link)
//   keeps `avoidance_utilization` of its share busy.
// * Idle restart (optional: Linux does it, ns-3 3.37 does not): a
//   connection idle for an RTO halves cwnd per RTO idle, down to the
//   initial window, and slow-starts again.
// * Outages: a connection stalled on a 0-rate link pauses; the bytes in the
//   closed queue leave when it is back and their ACKs restart the sender.
//   But one with lost bytes (in slow start, or a loss episode within 3
//   RTTs before the stall) through two or more timeouts resumes at its next
//   backed-off retransmission (RTO, 2 RTO, 4 RTO, ... after the stall
//   began), in slow start from one segment (docs/sim-flow.md, "Outages").
// * Loss per step: a congestion-avoidance connection's rate is capped by
//   the square-root law (Mathis et al.): segment / RTT x sqrt(3/2p).
// * Queueing: a link saturated by connections in congestion avoidance holds
//   a standing queue (`standing_queue_fill` of its buffer, the mean of
//   Cubic's sawtooth in it); a connection that starts sending behind it
//   waits for it to drain (FIFO) before its bytes share the link.
// Message arrival = the time its last byte passes the connection's links
// (the fluid stream) + the path's one-way propagation delay.
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <vector>

namespace st::sim::flow {

// The few constants of the model; the defaults are ns-3 3.37's TCP (the
// reference it is calibrated against, docs/sim-flow.md).
struct TcpConstants {
  double segment_bytes = 1448;      // TCP payload per packet (NetworkPlan::segment_bytes)
  double header_bytes = 54;         // per packet on the wire: PPP 2 + IP 20 + TCP 20 + timestamps 12
  double segments_per_ack = 2;      // delayed ACKs
  double initial_window_segments = 10;
  double socket_buffer_bytes = 64.0 * (1 << 20);
  double handshake_rtts = 1;        // a new connection sends data one RTT after its SYN
  bool restart_after_idle = false;  // ns-3 3.37: no; Linux: yes (tcp_slow_start_after_idle)
  double min_rto_s = 1.0;           // ns-3's MinRto
  double clock_granularity_s = 0.001;  // ns-3's ClockGranularity (sim/sim_plan.h, Ns3TcpTimers)
  double standing_queue_fill = 0.5; // not calibrated yet (docs/sim-flow.md)
  // The share of a link's wire rate that a connection in congestion
  // avoidance keeps busy while data also flows the other way (its ACKs
  // queue behind that data): ns-3's Cubic over a 2-BDP drop-tail buffer
  // with both directions loaded delivered 77-87% (docs/sim-flow.md); one
  // way it keeps the link full.
  // It applies once that other direction's data has sent more than its pipe
  // (BDP + buffer) since it went busy: a standing queue has built, at that
  // data's bottleneck (its slowest link) only.
  double avoidance_utilization = 0.82;
  // Slow start runs until the window overflows the pipe (BDP + buffer
  // share), and a burst from a larger window overflows it at once: the
  // excess is lost and crosses again, the window drops by `cubic_beta`.
  // Off: slow start ends, without loss, when the link fills (an ideal TCP).
  bool overshoot_loss = true;
  double cubic_beta = 0.7;
};

class FlowModel {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  // A stream offset reached by a connection: `handed` when the bytes up to
  // it fit in the sender's socket buffer (the transport's on_done),
  // `delivered` when they have all arrived at the receiver (at `at_s`,
  // which may be later than the time advance_to() reports it).
  struct Milestone {
    enum class Kind { handed, delivered };
    Kind kind = Kind::delivered;
    int connection = 0;
    uint64_t id = 0;
    double at_s = 0;
  };
  // What a link carried over [start_s, end_s): wire bytes (data and ACKs),
  // the TCP payload part of them, and packets.
  using LinkUsage =
      std::function<void(int link, double start_s, double end_s, double wire_bytes, double payload_bytes, double packets)>;

  explicit FlowModel(TcpConstants constants);

  // Links: wire rate in bytes per second (0: an outage), one-way delay,
  // drop-tail buffer in bytes.
  int add_link(double wire_bytes_per_s, double delay_s, double buffer_bytes);
  // A connection whose data crosses `links` and whose ACKs cross
  // `ack_links`; it opens at `now_s` (data after the handshake).
  int add_connection(std::vector<int> links, std::vector<int> ack_links, double now_s);

  // Changes at `now_s` (advance_to(now_s) first).
  void set_link_rate(int link, double wire_bytes_per_s, double now_s);
  void set_link_delay(int link, double delay_s, double now_s);
  void set_link_loss(int link, double loss, double now_s);

  // Appends `bytes` to the connection's stream at `now_s` (advance_to(now_s)
  // first); its milestones carry `id`. A `handed` milestone at once (no
  // wait for the socket buffer) is returned by the next advance_to().
  void send(int connection, uint64_t bytes, uint64_t id, double now_s);

  // The next time the model changes by itself (kNever when idle).
  double next_event_s() const { return next_event_s_; }
  // Moves the model to `now_s` (>= the last time), running every event due
  // by then; returns the milestones reached, in order.
  std::vector<Milestone> advance_to(double now_s);

  void on_link_usage(LinkUsage usage) { usage_ = std::move(usage); }

  // For tests and the run's report.
  double rate_bytes_per_s(int connection) const;  // payload rate now
  bool in_slow_start(int connection) const;
  double cwnd_bytes(int connection) const;
  uint64_t loss_episodes(int connection) const;

 private:
  struct Link {
    double rate = 0;  // wire bytes per second
    double delay_s = 0;
    double buffer_bytes = 0;
    double loss = 0;
    double carried = 0;  // wire bytes per second at the current rates
    double payload = 0;  // the TCP payload part of them
    double packets = 0;  // packets per second
  };
  struct Mark {
    double offset = 0;
    uint64_t id = 0;
  };
  struct Connection {
    std::vector<int> links, ack_links;
    double ready_s = 0;  // no data passes before this (handshake, FIFO wait, backed-off retransmission)
    double queued = 0;   // stream bytes accepted
    double passed = 0;   // stream bytes past every link (fluid)
    double cwnd = 0;
    bool slow_start = true;
    bool in_round = false;
    double round_end_s = 0;
    double round_start_passed = 0;
    bool round_backlogged = true;  // backlogged through the whole round so far
    double idle_since_s = 0;
    double stalled_since_s = -1;  // on a 0-rate link while backlogged
    double rate = 0;              // payload bytes per second
    double last_arrival_s = 0;    // arrivals keep the stream's order
    std::deque<Mark> handed, delivered;
    uint64_t losses = 0;  // loss episodes so far
    double last_loss_s = -kNever;  // when the last loss episode began
    double busy_since_passed = 0;  // the stream's offset when it last went busy
  };

  bool backlogged(const Connection& c) const { return c.passed < c.queued - kByteEpsilon; }
  bool can_send(const Connection& c, double now_s) const;
  double round_budget(const Connection& c) const;
  double one_way_s(const Connection& c) const;
  double loss_cap(const Connection& c) const;
  double data_weight_of(const Connection& c) const;
  double pipe_bytes(const Connection& c, const std::vector<int>& backlogged_on) const;
  std::vector<int> backlogged_per_link() const;
  void lose(Connection& c, double lost);
  double next_offset_of(const Connection& c) const;
  double wire_per_payload() const;
  double rtt_of(const Connection& c) const;
  double rto_of(const Connection& c) const;
  double standing_queue_s(const Connection& c) const;

  void move_streams(double to_s);
  void end_rounds(double now_s);
  void start_rounds(double now_s);
  void collect(double now_s, std::vector<Milestone>& out);
  void share_links();
  void plan_next_event(double now_s);
  void on_become_active(Connection& c, double now_s);
  void note_stalls(double now_s);

  static constexpr double kByteEpsilon = 1e-3;

  TcpConstants k_;
  std::vector<Link> links_;
  std::vector<Connection> connections_;
  std::vector<bool> reverse_loaded_;  // per link: some connection sends data over it now
  std::vector<Milestone> pending_;  // milestones already due at the next advance
  double now_s_ = 0;
  double next_event_s_ = kNever;
  LinkUsage usage_;
};

}  // namespace st::sim::flow
