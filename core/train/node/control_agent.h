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
  ControlAgent(int rank, int nodes, runtime::Executor& executor, telemetry::MeteredTransport& transport,
               comm::Mailbox& mailbox, std::unique_ptr<control::Controller> controller, double density,
               std::vector<int> batch, ResultsWriter* results);

  // Posts the receives; call once before training starts.
  void start();

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
  void answer_probes();
  void receive_probe_replies(int source);
  void send_probes();
  void on_telemetry(const telemetry::NodeTelemetry& t);
  void apply(const control::Plan& plan);
  // The plan's settings for this node, from its effective iteration on
  // (under the agent's lock); they replace any later ones.
  void add_settings(const control::Plan& plan, std::vector<int> batch);
  void fail(const std::string& what);
  const Setting& setting_at(int t) const;

  int rank_, nodes_;
  runtime::Executor& executor_;
  telemetry::MeteredTransport& transport_;
  comm::Mailbox& mailbox_;
  std::unique_ptr<control::Controller> controller_;
  ResultsWriter* results_;
  mutable std::mutex mutex_;
  int started_ = -1;                 // the latest iteration begun here
  std::vector<runtime::Nanos> probe_sent_;  // rank 0: when the probe to each node left (-1 ns: none out)
  std::map<int, Setting> settings_;  // by first iteration
};

}  // namespace st::train
