#pragma once
// The engine's side of the controller (docs/control.md): one agent per
// node. After each iteration the node's telemetry goes to rank 0 over the
// Transport (tag telemetry::kTelemetryTag); rank 0's agent feeds every
// report to the Controller, lets it tick on the executor's clock, and sends
// each resulting plan to every node (tag telemetry::kPlanTag). Every agent
// answers which density and batches are in force at an iteration.
//
// No timer drives the ticks: the controller ticks when telemetry arrives,
// so a deadlocked run sends nothing, ticks nothing, and the sim executor's
// stall watchdog still sees it.
//
// A plan must reach a node before that node begins the plan's iteration;
// the controller announces plans staleness + 2 iterations after rank 0's
// current one, which no node can have reached yet (docs/control.md). A plan
// that arrives late anyway is an error, never a silent mix of two settings.
// A plan may let the density alone start sooner (Plan::density_from): each
// node then switches it at its own next iteration, never within one.
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "core/comm/mailbox.h"
#include "core/control/controller.h"
#include "core/runtime/executor.h"
#include "core/telemetry/metered_transport.h"

namespace st::train {

class ResultsWriter;

class ControlAgent {
 public:
  // `controller`: rank 0's (null on other ranks). `results`: where rank 0
  // writes control.csv. Everything must outlive the agent.
  // `probe_at_start`: the controller's option of that name, on every rank.
  ControlAgent(int rank, int nodes, runtime::Executor& executor, telemetry::MeteredTransport& transport,
               comm::Mailbox& mailbox, std::unique_ptr<control::Controller> controller, double density,
               std::vector<int> batch, ResultsWriter* results, bool probe_at_start = false);

  // Posts the receives, then calls `begin_training` once (from any thread).
  // With probe_at_start, rank 0 first probes every node kStartProbes times
  // in a row, and every node begins once those probes are answered (rank
  // 0: once the answers are back): no gradient is queued ahead of them on
  // any connection, so the round trips measure the path. Two, because the
  // sim opens its connections as the run starts, so the first probe may
  // wait for a handshake; the second finds them open. It costs the run
  // kStartProbes round trips before the first iteration.
  void start(std::function<void()> begin_training);
  static constexpr int kStartProbes = 2;

  // The node begins iteration t (after this, a plan for t is late).
  void begin_iteration(int t);
  double density_at(int t) const;
  std::vector<int> batch_at(int t) const;

  // Sends the node's report (rank 0: feeds its own controller).
  void report(telemetry::NodeTelemetry t);

  // Per-peer bytes over the last window, for reports.

 private:
  struct Setting {
    double density;
    std::vector<int> batch;
    bool drain = false;  // a drain's iterations (rank 0 probes on each)
  };
  void receive_telemetry(int source);
  void receive_plans();
  // `begin_training` (if any): called once `before_training` more probes
  // are answered, or a receive fails (the system then meets the lost peer
  // itself).
  void answer_probes(int before_training = 0, std::function<void()> begin_training = nullptr);
  void receive_probe_replies(int source);
  void send_probes();
  void send_probe(int node);
  // Rank 0, under the agent's lock: a node answered a probe (or its
  // receive failed). Returns what begins training once every node has
  // answered its start probes (null otherwise, and after that).
  std::function<void()> count_start_probe(int node, bool failed);
  void on_telemetry(const telemetry::NodeTelemetry& t);
  void apply(const control::Plan& plan);
  // The plan's settings for this node, from its effective iteration on
  // (its density from the first iteration at or after density_from not yet
  // begun here, when the plan has one), under the agent's lock; they
  // replace any later ones.
  void add_settings(const control::Plan& plan, std::vector<int> batch);
  void fail(const std::string& what);
  const Setting& setting_at(int t) const;

  int rank_, nodes_;
  runtime::Executor& executor_;
  telemetry::MeteredTransport& transport_;
  comm::Mailbox& mailbox_;
  std::unique_ptr<control::Controller> controller_;
  ResultsWriter* results_;
  bool probe_at_start_;
  mutable std::mutex mutex_;
  int started_ = -1;                 // the latest iteration begun here
  std::vector<runtime::Nanos> probe_sent_;  // rank 0: when the probe to each node left (-1 ns: none out)
  std::vector<int> probes_answered_;        // rank 0: by each node, counted up to kStartProbes
  std::function<void()> begin_training_;    // rank 0: until every start probe is answered
  std::map<int, Setting> settings_;  // by first iteration
};

}  // namespace st::train
