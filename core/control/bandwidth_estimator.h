#pragma once
// The controller's estimate of the WAN bandwidth available to the gradient
// exchange (docs/control.md explains why it is built this way).
//
// Input, per node and iteration: how long the node's layer exchanges kept
// it busy (the union of their intervals), the quickest single exchange (a
// sample of the latency floor: propagation plus per-message cost), the
// exchange bytes the node received, and how long its forward waited for
// parameters against its backward time.
//
// Each update (one controller tick):
// * latency L = half the smallest round trip of the controller's latency
//   probes over the last `latency_memory` ticks (the minimum filters out
//   probes queued behind gradient data, as TCP's min-RTT does); before the
//   first probe returns, the smallest quickest-exchange time (which skew
//   between nodes can shorten: a node whose peer's chunk is already there
//   sees almost none);
// * measured rate R = sum(bytes) / sum(busy - L) over the samples whose
//   transfer part (busy - L) is long enough to time: the rate at which the
//   bytes arrived while they were in flight, net of latency. It does not
//   fall when the sender sends little, because idle time is not in the
//   denominator (with `skip_peer_lag`, a node's lag behind the quickest
//   node of the iteration is not in it either; with `skip_early_arrivals`,
//   a sample some of whose bytes had arrived before their exchange began
//   is left out; with `pair_by_iteration`, the sum is over the iterations
//   every node has reported, each node's lag and its peer's cancelling;
//   with `after_previous_iteration`, an iteration's transfer starts no
//   earlier than its node's earlier iterations' exchanges ended);
// * waiting fraction f = sum(wait) / sum(wait + 1.5 x backward), the
//   paper's measure of how much the exchange made the GPUs wait, counting
//   only the wait beyond what the planned exchange explains (ExchangePace:
//   where the round trip is longer than the compute window, every forward
//   waits for it at any density; there f is the tick's unplanned wait over
//   its planned iteration time, compute plus planned wait);
// * f above `wait_threshold`: the exchange overran, so the estimate drops to
//   min(R, previous) x (1 - wait_decrease x f), wait_decrease 1 by default
//   (with `decrease_once`, only on the first of consecutive overrunning
//   ticks; the next take min(R, previous); with `drain_at_delivered`, the
//   next take at least the delivered rate x (1 - wait_decrease x f));
//   otherwise nobody waited, and the estimate
//   becomes max(R, previous x growth): it jumps to a faster link as soon as
//   one is measured, and probes upward by `growth` when a measurement is
//   too small to show the link's rate (short messages, TCP's window), up to
//   `probe_ceiling` x the measured rate (with `resume_at_delivered`, the
//   tick that ends an overrun episode resumes at the rate delivered while
//   it lasted). A tick where nothing could be timed at all probes by
//   `probe_growth` instead (0: `growth`): its messages were too
//   short for the link to show, so the estimate is only a lower bound and
//   may climb as TCP's slow start does, doubling, rather than by 10% a tick
//   (a low first estimate, taken while the connections' windows opened,
//   otherwise takes tens of ticks to undo).
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace st::control {

struct ExchangeSample {
  double busy_ms = 0;
  double shortest_ms = 0;
  double bytes = 0;
  double wait_ms = 0;
  double backward_ms = 0;
  // Each exchange's [start, end) (ms, any common origin). When given, the
  // transfer time is the union of [start + latency, end): the first latency
  // of every exchange carries no bytes, and exchanges that do not overlap
  // each pay it. Empty: busy_ms - latency.
  std::vector<std::pair<double, double>> intervals;
  int iteration = -1;  // the iteration the sample reports (-1: not known)
  int node = -1;       // the node that reports it (-1: not known; pair_by_iteration times it alone)
  double density = 0;  // the density the node's iteration ran at (0: not known; samples_by_plan)
  // The clock (ms, common to the run's samples) that `intervals` are
  // relative to (-1: not known; after_previous_iteration).
  double origin_ms = -1;
};

// How the exchanges are paced, so that the wait the round trip alone
// explains is not read as an overrun. With staleness s, iteration t + s + 1's
// forward needs iteration t's update, which arrives one exchange E after t's
// backward ends: the period is at least (C + E) / (s + 1) for a compute time
// C, and every forward waits max(0, (E - s x C) / (s + 1)). The exchange the
// controller planned is E = hops x L + budget (latency plus the transfer
// time it allowed): that much wait is the plan, not a sign that the link is
// slower than estimated. Where C covers the exchange (the paper's regime of
// slow GPUs, s x C >= E) the planned wait is 0 and nothing changes.
struct ExchangePace {
  double compute_ms = 0;  // C; 0: unknown, no wait is planned
  int staleness = 1;      // s
  int latency_hops = 1;   // one-way latencies one after another in an exchange (W - 1 in a ring of W)
  double budget_ms = 0;   // the transfer time the density was chosen for (negative counts as 0)
  double density = 0;     // the density the newest plan set (0: not known; samples_by_plan)
};

struct BandwidthEstimatorOptions {
  double initial_mbps = 100;    // before the first measurement
  double growth = 1.10;         // per tick without waiting
  // Probing stops at this multiple of the measured rate R. 4: R may be far
  // under the link (short messages measure the latency, not the rate).
  // Near 1: where the exchange is large enough to be limited by the link,
  // R is the link's rate, and an estimate above R / safety plans more bytes
  // than the link carries in the window. The overrun that shows it comes
  // ticks later, once the queue is deep enough to make the forwards wait
  // (ResNet-152 at a constant 100 Mbps: R of 76-88 Mbps while probing took
  // the estimate to 128-139 before the first wait, then three or four ticks
  // of it).
  // While R keeps up with the plan it stays at or above the estimate that
  // planned the bytes it measures, so a ceiling above `growth` still lets
  // the estimate climb on a link that is not full.
  double probe_ceiling = 4;
  double probe_growth = 0;      // per tick without waiting where nothing could be timed; 0: growth
  // Ticks with samples at the start whose overrun does not shrink the
  // estimate: the connections' windows are still opening then, so the wait
  // measures TCP's slow start, not the link. 0: every tick counts.
  int slow_start_ticks = 0;
  // false: every tick that overruns shrinks the estimate by (1 - f). true:
  // only the first of consecutive overrunning ticks does; the next ones
  // take min(estimate, R). A queue a larger plan left behind keeps the
  // forwards waiting for the few ticks it takes to drain, and shrinking on
  // each of them compounds (ResNet-152 at fluct-115: 9.3, 2.2, 0.3,
  // 0.1 Mbps in four ticks while the link delivered 55-93 Mbps). TCP
  // likewise decreases once per loss event, not once per lost packet.
  bool decrease_once = false;
  // The share of the waiting fraction an overrun takes off: the estimate
  // falls to min(estimate, R) x (1 - wait_decrease x f). 1 drains the
  // queue the overrun left in about one iteration, and the smaller plan
  // then holds for the controller's delay (a plan takes effect one to two
  // iterations after its tick), so the link idles once the queue is gone:
  // ResNet-152 at fluct-115, a tick with f = 0.62 cut the estimate from 212
  // to 35 Mbps, and the next second the link carried 40 of its 244.
  // Below 1, the queue drains over a few iterations instead.
  double wait_decrease = 1;
  // false: after an overrun the estimate climbs back by `growth` a tick.
  // true: the episode ends at the first tick without an overrun, or whose
  // newest iteration (every sample of it) waited no more than planned: the
  // queue has drained then, although the tick's older iterations still
  // waited (telemetry reaches the controller an iteration or two late, and
  // a plan takes effect staleness + 2 iterations after its tick). That
  // tick resumes at least at the largest rate delivered (add_delivered)
  // during the episode, and at most at the estimate that overran. While
  // forwards wait, the link is backlogged, so what it delivered then is its
  // rate (BBR's bottleneck-bandwidth sample). The (1 - f) decrease drains
  // the queue; climbing back from there at 10% a tick left a link that
  // recovered at once mostly idle (ResNet-152 at fluct-115: 11.6 Mbps
  // planned for four ticks, its density held for eight iterations, while
  // the link delivered 90 during the drain and could carry 138-166 after
  // it).
  bool resume_at_delivered = false;
  // false: the ticks of an overrun episode after its first take
  // min(estimate, R) (decrease_once) or cut again. true: they also raise
  // the estimate to the rate the link delivered in the tick's window less
  // the share of it the waiting fraction asks to drain, delivered x
  // (1 - wait_decrease x f), up to the estimate that overran. The first
  // tick cuts from R, the rate at which the waited iterations' bytes
  // crossed: on a trace that is often a trough's rate, and the link has
  // recovered by the time the cut plan runs, while older iterations still
  // report waits and hold the episode open (ResNet-152 at fluct-115: a
  // trough of 20 Mbps cut the estimate to 18.7, and for 2.5 s the plan
  // held at that while the link delivered 66-116 Mbps draining the queue
  // and could carry 110-130). While forwards wait the link is backlogged,
  // so what it delivers is its rate, as `resume_at_delivered` reads it at
  // the episode's end; this reads it at every tick of the episode.
  bool drain_at_delivered = false;
  // false: any tick whose samples waited beyond the plan is an overrun.
  // true: outside an overrun episode, a tick whose newest iteration waited
  // no more than planned holds the estimate instead: the wait is older
  // iterations', queued behind a plan already answered or reported late,
  // and its episode has ended. With plans that take effect at each node's
  // next iteration (`early_density_switch`), an episode ends as soon as
  // the smaller density runs, and the other node's reports of the
  // iterations before it arrive a tick later: without this each such
  // report started a new episode and cut the estimate again
  // (docs/control-switch.md).
  bool fresh_overruns = false;
  // false: every sample's wait is judged against the newest plan, and
  // every timed sample counts in R. true: each sample is judged by the
  // density its iteration ran at (ExchangeSample::density against
  // ExchangePace::density, the newest plan's):
  // * a sample that ran above the newest plan's density ran under a plan
  //   a smaller one has already answered, so its wait is left out of the
  //   waiting fraction; a tick where only such samples waited holds the
  //   estimate, and ends an overrun episode if some sample of the newest
  //   plan's density (or below) reported without waiting (if none did,
  //   the episode goes on: the larger plan's queue may still be draining);
  // * an iteration whose nodes ran at different densities (a plan taken
  //   at each node's next iteration reaches one node an iteration before
  //   the other) is left out of R: its bytes and its busy time belong to
  //   two plans (in pair_by_iteration's groups, by group; otherwise among
  //   the tick's samples of that iteration).
  // The general form of `fresh_overruns`, which judges only by the newest
  // iteration (docs/control-switch.md). Replaces it; set one.
  bool samples_by_plan = false;
  // false: each exchange's first `latency` carries no bytes. true: also
  // its node's lag behind the quickest node of the iteration does not.
  // An exchange ends when every peer's part has arrived, so a node that
  // posts before its peers waits for them, and its quickest exchange (a
  // tiny layer) is that wait plus the latency, where the late node's
  // quickest completes at once. While nobody waits, nodes hold whatever
  // phase they drifted to (ResNet-152 at fluct-115: rank 1 posted about
  // 280 ms after rank 0 for 20 s; rank 0's exchanges took 300-440 ms to
  // move 2.7 MB over a link of 116-168 Mbps, R read 41-51 Mbps, and the
  // probing ceiling held the estimate at 58). The lag is the node's
  // quickest exchange less the iteration's quickest (at least the
  // latency): a queue that delays every node's exchanges alike is transfer
  // time and stays in.
  bool skip_peer_lag = false;
  // false: every sample whose transfer can be timed counts. true: a sample
  // with an exchange that ended within the latency of its start does not.
  // A sample's bytes are its whole iteration's, its transfer time the
  // union of its exchanges' [start + latency, end); an exchange that ends
  // sooner than the latency after its start had its peer's part before
  // it began (the peer posted first), so it adds bytes and no time, and R
  // reads above the link: ResNet-152 at fluct-115, whose trace tops at
  // 294 Mbps, measured up to 323 Mbps with a tick every second and 1250
  // with one every half second (fewer samples per tick), and the estimate
  // adopts a faster rate at once. Measured, leaving them out removes those
  // readings but keeps the node that posts first, whose exchanges also
  // wait for its peer's later layers: R then reads 24-32% under a
  // constant link. Not recommended; it shows that the two nodes' samples
  // must be paired by iteration (docs/control-reaction.md).
  bool skip_early_arrivals = false;
  // false: each node's sample is timed on its own. true: R is taken over
  // whole iterations, every node's sample of one iteration together (a
  // sample waits, for up to `pair_wait_iterations` newer iterations, for
  // the rest of its iteration's). An exchange is timed from its node's
  // post, but the bytes it receives left when its peer posted: the node
  // that posts first counts its lag behind its peer as transfer time, the
  // node that posts second misses the same lag (bytes already there are
  // not timed at all, and a sample of such exchanges falls under
  // `min_transfer_ms` and is dropped). With two nodes the two errors are
  // equal and opposite, so the iteration's bytes over its summed transfer
  // time do not depend on the phase the nodes drifted to; samples timed
  // alone read under the link for one node and over it for the other,
  // and a tick that holds more of one node's samples reads that node's
  // bias. Replaces `skip_peer_lag` and `skip_early_arrivals`, which
  // correct one half each (docs/control-reaction.md).
  bool pair_by_iteration = false;
  int pair_wait_iterations = 4;
  // false: an iteration's transfer time is the union of its own exchanges'
  // [start + latency, end). true: it also starts no earlier than the end of
  // the last exchange of the same node's iterations timed before it
  // (samples that give ExchangeSample::origin_ms). A node posts its layer
  // exchanges in iteration order, and each peer's bytes travel one stream,
  // so while an earlier iteration's exchange is outstanding the bytes that
  // arrive are that iteration's: an iteration posted behind it counts the
  // same time again, and R reads under a backlogged link by the overlap
  // (the pipeline overlaps iteration t's exchange with t + 1's backward,
  // and an exchange planned to fill the window overlaps the next one's
  // whenever the link is slower than planned).
  bool after_previous_iteration = false;
  double wait_threshold = 0.02; // waiting fraction that counts as an overrun
  double min_mbps = 0.01;
  double max_mbps = 1e6;
  int latency_memory = 30;      // ticks over which the latency floor is the minimum
  double min_transfer_ms = 0.3; // shorter transfer parts cannot be timed reliably
};

struct BandwidthEstimate {
  double mbps = 0;                       // the estimate after this update
  std::optional<double> measured_mbps;   // R, when some sample could be timed
  double latency_ms = 0;                 // L
  double wait_fraction = 0;              // f, of the wait beyond the planned wait
  double planned_wait_ms = 0;            // per iteration (ExchangePace)
  // "overrun", "overrun, decreased already" (decrease_once), "slow start",
  // "measured", "probe", "no samples"; with resume_at_delivered, "the newest
  // iteration waited no more than planned" is appended where that ended an
  // episode, and "resumed at the delivered rate" where it raised the
  // estimate; a held tick reads "older iterations waited, the newest did
  // not; hold" (fresh_overruns), "iterations above the newest plan's
  // density waited; hold" or "only iterations above the newest plan's
  // density reported, and they waited; hold" (samples_by_plan); "draining
  // below the delivered rate" is appended where drain_at_delivered raised
  // the estimate
  std::string reason;
};

class BandwidthEstimator {
 public:
  // Throws std::invalid_argument naming a bad option. `nodes`: how many
  // nodes report each iteration (pair_by_iteration waits for all of them).
  explicit BandwidthEstimator(BandwidthEstimatorOptions options = {}, int nodes = 1);

  void add(const ExchangeSample& sample);
  // One latency probe's round trip.
  void add_round_trip(double rtt_ms);
  // The rate (Mbps) the exchange delivered over the last window, as the
  // node that reports it received it: read by `resume_at_delivered` and
  // `drain_at_delivered` only.
  void add_delivered(double mbps);
  // Uses the samples added since the last update.
  BandwidthEstimate update(const ExchangePace& pace = {});

  double mbps() const { return mbps_; }
  double latency_ms() const;

 private:
  // An overrunning tick: starts an episode or extends it.
  void note_overrun(double delivered_mbps);
  // resume_at_delivered, at the tick that ends an episode.
  void resume_after_episode(bool still_overran, BandwidthEstimate& e);
  // drain_at_delivered, at an episode's later ticks.
  void drain_below_delivered(double delivered_mbps, BandwidthEstimate& e);

  BandwidthEstimatorOptions options_;
  int nodes_;
  double mbps_;
  std::vector<ExchangeSample> pending_;
  std::map<int, std::vector<ExchangeSample>> unpaired_;  // pair_by_iteration: by iteration, until complete
  std::map<int, double> node_clear_ms_;  // after_previous_iteration: per node, the latest exchange end timed
  std::deque<double> latency_minima_;  // one per tick that had samples
  std::deque<double> rtt_minima_;      // one per tick that had probes
  double pending_rtt_ms_ = -1;         // smallest round trip since the last update (-1: none)
  int ticks_with_samples_ = 0;
  bool overran_last_tick_ = false;     // the last tick with samples overran
  double pending_delivered_mbps_ = 0;  // since the last update
  double episode_delivered_mbps_ = 0;  // the largest delivered rate in this overrun episode
  double episode_start_mbps_ = 0;      // the estimate that overran, before the episode's decrease
};

}  // namespace st::control
