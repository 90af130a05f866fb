#include "sim/flow/flow_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace st::sim::flow {
namespace {

constexpr double kSaturated = 0.999;  // a link carrying this share of its rate is full

// The retransmission timeouts that fired after `from_s` (the first an RTO
// later, each next one twice as far) and before `to_s`; `next_s` is the
// first at or after `to_s`.
int timeouts_between(double from_s, double to_s, double rto, double& next_s) {
  int fired = 0;
  double backoff = rto;
  next_s = from_s + rto;
  while (next_s < to_s) {
    ++fired;
    backoff *= 2;
    next_s += backoff;
  }
  return fired;
}

}  // namespace

FlowModel::FlowModel(TcpConstants constants) : k_(constants) {
  if (!(k_.segment_bytes > 0) || !(k_.header_bytes >= 0) || !(k_.segments_per_ack >= 1) ||
      !(k_.initial_window_segments >= 1) || !(k_.socket_buffer_bytes >= k_.segment_bytes) || !(k_.min_rto_s > 0) ||
      !(k_.clock_granularity_s >= 0) ||
      !(k_.standing_queue_fill >= 0 && k_.standing_queue_fill <= 1) ||
      !(k_.avoidance_utilization > 0 && k_.avoidance_utilization <= 1))
    throw std::invalid_argument("flow model: TCP constants out of range");
}

int FlowModel::add_link(double wire_bytes_per_s, double delay_s, double buffer_bytes) {
  if (!(wire_bytes_per_s >= 0) || !(delay_s >= 0) || !(buffer_bytes >= 0))
    throw std::invalid_argument("flow model: a link needs a rate, delay and buffer >= 0");
  Link link;
  link.rate = wire_bytes_per_s;
  link.delay_s = delay_s;
  link.buffer_bytes = buffer_bytes;
  links_.push_back(link);
  return static_cast<int>(links_.size()) - 1;
}

int FlowModel::add_connection(std::vector<int> links, std::vector<int> ack_links, double now_s) {
  for (const int l : links)
    if (l < 0 || l >= static_cast<int>(links_.size())) throw std::invalid_argument("flow model: no such link");
  for (const int l : ack_links)
    if (l < 0 || l >= static_cast<int>(links_.size())) throw std::invalid_argument("flow model: no such link");
  if (links.empty()) throw std::invalid_argument("flow model: a connection crosses at least one link");
  Connection c;
  c.links = std::move(links);
  c.ack_links = std::move(ack_links);
  c.cwnd = k_.initial_window_segments * k_.segment_bytes;
  c.idle_since_s = now_s;
  c.ready_s = now_s + k_.handshake_rtts * rtt_of(c);
  connections_.push_back(std::move(c));
  return static_cast<int>(connections_.size()) - 1;
}

void FlowModel::set_link_rate(int link, double wire_bytes_per_s, double now_s) {
  if (!(wire_bytes_per_s >= 0)) throw std::invalid_argument("flow model: a link rate is >= 0");
  links_.at(static_cast<std::size_t>(link)).rate = wire_bytes_per_s;
  start_rounds(now_s);
  share_links();
  note_stalls(now_s);
  plan_next_event(now_s);
}

void FlowModel::set_link_delay(int link, double delay_s, double now_s) {
  if (!(delay_s >= 0)) throw std::invalid_argument("flow model: a link delay is >= 0");
  links_.at(static_cast<std::size_t>(link)).delay_s = delay_s;
  plan_next_event(now_s);
}

void FlowModel::set_link_loss(int link, double loss, double now_s) {
  if (!(loss >= 0 && loss < 1)) throw std::invalid_argument("flow model: a loss probability is in [0, 1)");
  links_.at(static_cast<std::size_t>(link)).loss = loss;
  share_links();
  plan_next_event(now_s);
}

void FlowModel::send(int connection, uint64_t bytes, uint64_t id, double now_s) {
  Connection& c = connections_.at(static_cast<std::size_t>(connection));
  const bool was_backlogged = backlogged(c);
  c.queued += static_cast<double>(bytes);
  if (bytes == 0) {  // nothing to pass: it arrives one propagation delay later
    c.last_arrival_s = std::max(c.last_arrival_s, now_s + one_way_s(c));
    pending_.push_back({Milestone::Kind::handed, connection, id, now_s});
    pending_.push_back({Milestone::Kind::delivered, connection, id, c.last_arrival_s});
    next_event_s_ = now_s;
    return;
  }
  c.delivered.push_back({c.queued, id});
  if (c.queued - c.passed <= k_.socket_buffer_bytes && c.handed.empty())
    pending_.push_back({Milestone::Kind::handed, connection, id, now_s});
  else
    c.handed.push_back({c.queued, id});
  if (!was_backlogged) on_become_active(c, now_s);
  start_rounds(now_s);
  share_links();
  note_stalls(now_s);
  plan_next_event(now_s);
}

std::vector<FlowModel::Milestone> FlowModel::advance_to(double now_s) {
  if (now_s < now_s_) now_s = now_s_;  // never backwards (the caller's clock is monotonic)
  std::vector<Milestone> out = std::move(pending_);
  pending_.clear();
  while (next_event_s_ <= now_s) {
    const double t = std::max(next_event_s_, now_s_);
    move_streams(t);
    collect(t, out);
    end_rounds(t);
    start_rounds(t);
    share_links();
    note_stalls(t);
    plan_next_event(t);
  }
  move_streams(now_s);
  return out;
}

// --- streams ------------------------------------------------------------------

void FlowModel::move_streams(double to_s) {
  const double dt = to_s - now_s_;
  if (dt <= 0) return;
  for (Connection& c : connections_) {
    if (c.rate <= 0) continue;
    // Landing on the planned offset exactly (rather than a rounding short)
    // keeps events from repeating.
    const double next_offset = next_offset_of(c);
    const double moved = c.passed + c.rate * dt;
    c.passed = (moved >= next_offset - kByteEpsilon && next_offset > c.passed) ? next_offset : std::min(moved, c.queued);
  }
  if (usage_) {
    for (std::size_t l = 0; l < links_.size(); ++l) {
      if (links_[l].carried <= 0) continue;
      const Link& link = links_[l];
      usage_(static_cast<int>(l), now_s_, to_s, link.carried * dt, link.payload * dt, link.packets * dt);
    }
  }
  now_s_ = to_s;
}

void FlowModel::collect(double now_s, std::vector<Milestone>& out) {
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = connections_[i];
    while (!c.handed.empty() && c.handed.front().offset - c.passed <= k_.socket_buffer_bytes + kByteEpsilon) {
      out.push_back({Milestone::Kind::handed, static_cast<int>(i), c.handed.front().id, now_s});
      c.handed.pop_front();
    }
    while (!c.delivered.empty() && c.delivered.front().offset <= c.passed + kByteEpsilon) {
      c.last_arrival_s = std::max(c.last_arrival_s, now_s + one_way_s(c));
      out.push_back({Milestone::Kind::delivered, static_cast<int>(i), c.delivered.front().id, c.last_arrival_s});
      c.delivered.pop_front();
    }
    if (!backlogged(c) && c.queued > 0 && c.rate > 0) {  // went idle just now
      c.passed = c.queued;
      c.round_backlogged = false;
      c.idle_since_s = now_s;
      c.rate = 0;
    }
  }
}

// --- the window -----------------------------------------------------------------

void FlowModel::end_rounds(double now_s) {
  for (Connection& c : connections_) {
    if (!c.in_round || c.round_end_s > now_s) continue;
    const double sent = c.passed - c.round_start_passed;
    c.in_round = false;
    if (!c.slow_start) continue;
    const bool window_used = sent >= c.cwnd - kByteEpsilon;
    const bool link_limited = c.round_backlogged && !window_used;
    c.cwnd += sent;
    if (k_.overshoot_loss) {
      // ns-3's Cubic grows past the pipe (its HyStart did not fire in the
      // traces of docs/sim-flow.md) until the buffer overflows.
      const double pipe = pipe_bytes(c, backlogged_per_link());
      if (c.cwnd > pipe) lose(c, c.cwnd - pipe);
    } else if (link_limited) {
      c.slow_start = false;  // an ideal exit: backlogged all round yet the window was not the limit
    }
  }
}

// The bytes a connection can have in flight before the bottleneck drops:
// its fair share of the path's BDP and of the bottleneck's buffer, shared
// with the other backlogged connections on each link (`backlogged_on`, from
// backlogged_per_link()).
double FlowModel::pipe_bytes(const Connection& c, const std::vector<int>& backlogged_on) const {
  const double wire = wire_per_payload();
  double pipe = kNever;
  for (const int l : c.links) {
    const Link& link = links_[static_cast<std::size_t>(l)];
    const int sharing = std::max(backlogged_on[static_cast<std::size_t>(l)], 1);
    pipe = std::min(pipe, (link.rate / wire * rtt_of(c) + link.buffer_bytes) / sharing);
  }
  return pipe;
}

std::vector<int> FlowModel::backlogged_per_link() const {
  std::vector<int> count(links_.size(), 0);
  for (const Connection& c : connections_)
    if (backlogged(c))
      for (const int l : c.links) count[static_cast<std::size_t>(l)] += 1;
  return count;
}

// A loss episode: the `lost` bytes cross again (the stream's later offsets
// move back by them), the window drops by Cubic's beta, slow start ends.
void FlowModel::lose(Connection& c, double lost) {
  c.queued += lost;
  for (Mark& m : c.delivered) m.offset += lost;
  for (Mark& m : c.handed) m.offset += lost;
  c.cwnd *= k_.cubic_beta;
  c.slow_start = false;
  c.in_round = false;
  c.losses += 1;
  c.last_loss_s = now_s_;
}

void FlowModel::start_rounds(double now_s) {
  for (Connection& c : connections_) {
    if (!c.slow_start || c.in_round || !can_send(c, now_s)) continue;
    c.in_round = true;
    c.round_start_passed = c.passed;
    c.round_end_s = now_s + rtt_of(c);
    c.round_backlogged = true;
  }
}

void FlowModel::on_become_active(Connection& c, double now_s) {
  if (k_.restart_after_idle && !c.in_round) {
    const double rto = rto_of(c);
    const double idle = now_s - c.idle_since_s;
    if (idle >= rto) {  // Linux's tcp_cwnd_restart: halve per RTO idle, not under the initial window
      const double initial = k_.initial_window_segments * k_.segment_bytes;
      c.cwnd = std::max(initial, c.cwnd / std::pow(2.0, std::floor(idle / rto)));
      c.slow_start = true;
    }
  }
  c.busy_since_passed = c.passed;
  c.ready_s = std::max(c.ready_s, now_s + standing_queue_s(c));
  // A burst from a window larger than the pipe overflows the buffer at once
  // (ns-3 keeps the window over idle periods).
  if (k_.overshoot_loss && !c.slow_start) {
    const double burst = std::min(c.cwnd, c.queued - c.passed);
    const double pipe = pipe_bytes(c, backlogged_per_link());
    if (burst > pipe) lose(c, burst - pipe);
  }
}

double FlowModel::round_budget(const Connection& c) const {
  if (!c.slow_start) return kNever;
  if (!c.in_round) return c.cwnd;
  return c.round_start_passed + c.cwnd - c.passed;
}

bool FlowModel::can_send(const Connection& c, double now_s) const {
  if (!backlogged(c) || c.ready_s > now_s) return false;
  if (round_budget(c) <= kByteEpsilon) return false;
  for (const int l : c.links)
    if (links_[static_cast<std::size_t>(l)].rate <= 0) return false;
  return true;
}

// --- sharing ------------------------------------------------------------------

// Max-min by progressive filling: every unfrozen connection's rate grows
// alike until a link it crosses is full (data and ACK weights per payload
// byte) or it reaches its own cap; then it is frozen.
void FlowModel::share_links() {
  const double data_weight = wire_per_payload();
  const double ack_weight = k_.header_bytes / (k_.segments_per_ack * k_.segment_bytes);
  std::vector<double> remaining(links_.size());
  for (std::size_t l = 0; l < links_.size(); ++l) remaining[l] = links_[l].rate;
  std::vector<std::size_t> unfrozen;
  std::vector<double> caps(connections_.size(), kNever);
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    Connection& c = connections_[i];
    c.rate = 0;
    if (!can_send(c, now_s_)) continue;
    caps[i] = loss_cap(c);
    unfrozen.push_back(i);
  }
  // A connection whose data has, since it went busy, sent more than its
  // pipe holds (BDP + buffer) keeps a standing queue at its bottleneck (its
  // slowest link), and the other direction's ACKs wait in it; a burst the
  // pipe absorbs leaves none. Its faster links (a LAN hop) hold no queue
  // worth the name: in a ring, the next hop's ACKs share the sender's LAN
  // uplink with its data and lose nothing by it.
  reverse_loaded_.assign(links_.size(), false);
  const std::vector<int> backlogged_on = backlogged_per_link();
  for (const std::size_t i : unfrozen) {
    const Connection& c = connections_[i];
    if (c.slow_start || c.passed - c.busy_since_passed < pipe_bytes(c, backlogged_on)) continue;
    double slowest = kNever;
    for (const int l : c.links) slowest = std::min(slowest, links_[static_cast<std::size_t>(l)].rate);
    for (const int l : c.links)
      if (links_[static_cast<std::size_t>(l)].rate <= slowest) reverse_loaded_[static_cast<std::size_t>(l)] = true;
  }
  std::vector<double> weight(links_.size());
  while (!unfrozen.empty()) {
    std::fill(weight.begin(), weight.end(), 0.0);
    for (const std::size_t i : unfrozen) {
      const double w = data_weight_of(connections_[i]);
      for (const int l : connections_[i].links) weight[static_cast<std::size_t>(l)] += w;
      for (const int l : connections_[i].ack_links) weight[static_cast<std::size_t>(l)] += ack_weight;
    }
    double step = kNever;
    for (std::size_t l = 0; l < links_.size(); ++l)
      if (weight[l] > 0) step = std::min(step, std::max(0.0, remaining[l]) / weight[l]);
    for (const std::size_t i : unfrozen) step = std::min(step, caps[i] - connections_[i].rate);
    if (!std::isfinite(step)) break;  // only links without users: cannot happen with a rate > 0
    for (const std::size_t i : unfrozen) connections_[i].rate += step;
    for (std::size_t l = 0; l < links_.size(); ++l) remaining[l] -= step * weight[l];
    std::vector<std::size_t> still;
    for (const std::size_t i : unfrozen) {
      const Connection& c = connections_[i];
      bool frozen = c.rate >= caps[i] * (1 - 1e-12);
      for (const int l : c.links) frozen = frozen || remaining[static_cast<std::size_t>(l)] <= links_[l].rate * 1e-12;
      for (const int l : c.ack_links)
        frozen = frozen || remaining[static_cast<std::size_t>(l)] <= links_[l].rate * 1e-12;
      if (!frozen) still.push_back(i);
    }
    unfrozen.swap(still);
  }
  for (Link& link : links_) link.carried = link.payload = link.packets = 0;
  for (Connection& c : connections_) {
    if (c.rate <= 0) continue;
    const double data_packets = c.rate / k_.segment_bytes;
    for (const int l : c.links) {
      Link& link = links_[static_cast<std::size_t>(l)];
      link.carried += c.rate * data_weight;  // what the wire carries; the rest of its share went idle
      link.payload += c.rate;
      link.packets += data_packets;
    }
    for (const int l : c.ack_links) {
      Link& link = links_[static_cast<std::size_t>(l)];
      link.carried += c.rate * ack_weight;
      link.packets += data_packets / k_.segments_per_ack;
    }
    // In congestion avoidance the window is at least what the link carries.
    if (!c.slow_start) c.cwnd = std::max(c.cwnd, c.rate * rtt_of(c));
  }
}

// Wire time per payload byte: headers, and in congestion avoidance with
// data flowing the other way, the share of the link left idle while its
// ACKs wait behind that data (ns-3 keeps a one-way transfer's link full).
double FlowModel::data_weight_of(const Connection& c) const {
  const double wire = wire_per_payload();
  if (c.slow_start) return wire;
  for (const int l : c.ack_links)
    if (reverse_loaded_[static_cast<std::size_t>(l)]) return wire / k_.avoidance_utilization;
  return wire;
}

double FlowModel::loss_cap(const Connection& c) const {
  if (c.slow_start) return kNever;
  double through = 1;
  for (const int l : c.links) through *= 1 - links_[static_cast<std::size_t>(l)].loss;
  const double p = 1 - through;
  if (p <= 0) return kNever;
  return k_.segment_bytes / rtt_of(c) * std::sqrt(1.5 / p);
}

double FlowModel::standing_queue_s(const Connection& c) const {
  double wait = 0;
  for (const int l : c.links) {
    const Link& link = links_[static_cast<std::size_t>(l)];
    if (link.rate <= 0 || link.carried < kSaturated * link.rate) continue;
    const bool queue_builder = std::any_of(connections_.begin(), connections_.end(), [&](const Connection& other) {
      return &other != &c && !other.slow_start && other.rate > 0 &&
             std::find(other.links.begin(), other.links.end(), l) != other.links.end();
    });
    if (queue_builder) wait += k_.standing_queue_fill * link.buffer_bytes / link.rate;
  }
  return wait;
}

// ns-3 through an outage (docs/sim-flow.md, "Outages"): the bytes waiting in
// the closed queue leave when the link is back and their ACKs restart the
// sender at once, however many timeouts fired. Where bytes were lost (a
// window sent into the outage, or holes of a loss episode not yet repaired)
// and a second timeout fired, it waits for the first retransmission after
// the link is back and starts again from one segment.
void FlowModel::note_stalls(double now_s) {
  bool waits_now = false;
  for (Connection& c : connections_) {
    bool path_down = false;
    for (const int l : c.links) path_down = path_down || links_[static_cast<std::size_t>(l)].rate <= 0;
    if (path_down) {
      if (c.stalled_since_s < 0 && backlogged(c) && c.ready_s <= now_s) c.stalled_since_s = now_s;
      c.round_backlogged = false;  // a round cut by an outage says nothing about the window
      continue;
    }
    if (c.stalled_since_s < 0) continue;
    const double stalled_since = c.stalled_since_s;
    c.stalled_since_s = -1;
    // A loss is found a round trip after the drop and repaired in about
    // another; three leave room for the queue's delay.
    const bool lost_bytes = c.slow_start || stalled_since - c.last_loss_s < 3 * rtt_of(c);
    double next_retransmit = 0;
    if (!lost_bytes || timeouts_between(stalled_since, now_s, rto_of(c), next_retransmit) < 2) continue;
    c.ready_s = std::max(c.ready_s, next_retransmit);
    c.cwnd = k_.segment_bytes;
    c.slow_start = true;
    c.in_round = false;
    waits_now = true;
  }
  if (waits_now) share_links();  // a connection that now waits gives its share back
}

// ns-3's rule with the round trip as the smoothed RTT and its variation
// (4 rttvar) taken as one more round trip.
double FlowModel::rto_of(const Connection& c) const {
  const double rtt = rtt_of(c);
  return std::max(k_.min_rto_s, rtt + std::max(k_.clock_granularity_s, rtt));
}

void FlowModel::plan_next_event(double now_s) {
  double next = pending_.empty() ? kNever : now_s;
  for (const Connection& c : connections_) {
    if (c.in_round) next = std::min(next, c.round_end_s);
    if (backlogged(c) && c.ready_s > now_s) next = std::min(next, c.ready_s);
    if (c.rate <= 0) continue;
    next = std::min(next, now_s + std::max(0.0, next_offset_of(c) - c.passed) / c.rate);
  }
  next_event_s_ = next;
}

// The nearest stream offset at which something happens: a message passes,
// one fits in the socket buffer, the round's window is used up, the
// backlog ends.
double FlowModel::next_offset_of(const Connection& c) const {
  double offset = c.queued;
  if (!c.delivered.empty()) offset = std::min(offset, c.delivered.front().offset);
  if (!c.handed.empty()) offset = std::min(offset, c.handed.front().offset - k_.socket_buffer_bytes);
  if (c.slow_start && c.in_round) offset = std::min(offset, c.round_start_passed + c.cwnd);
  return offset;
}

// --- paths --------------------------------------------------------------------

double FlowModel::wire_per_payload() const { return (k_.segment_bytes + k_.header_bytes) / k_.segment_bytes; }

double FlowModel::one_way_s(const Connection& c) const {
  double delay = 0;
  for (const int l : c.links) delay += links_[static_cast<std::size_t>(l)].delay_s;
  return delay;
}

double FlowModel::rtt_of(const Connection& c) const {
  double delay = one_way_s(c);
  for (const int l : c.ack_links) delay += links_[static_cast<std::size_t>(l)].delay_s;
  return std::max(delay, 1e-6);
}

double FlowModel::rate_bytes_per_s(int connection) const { return connections_.at(static_cast<std::size_t>(connection)).rate; }
bool FlowModel::in_slow_start(int connection) const {
  return connections_.at(static_cast<std::size_t>(connection)).slow_start;
}
double FlowModel::cwnd_bytes(int connection) const { return connections_.at(static_cast<std::size_t>(connection)).cwnd; }
uint64_t FlowModel::loss_episodes(int connection) const {
  return connections_.at(static_cast<std::size_t>(connection)).losses;
}

}  // namespace st::sim::flow
