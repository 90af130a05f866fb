#pragma once
// The emulated network of one run (the helper of emu/: it wires the model
// pieces together): the namespaces, veth pairs, addresses and routes of an
// EmulationPlan, LAN rates, one LinkShaper per WAN direction and the
// LinkReplay driving them. It registers the run before creating anything
// (run_registry.h) and removes everything it created when destroyed, on
// every path: normal end, exception, or a signal handled by its owner.
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "emu/emu_plan.h"
#include "emu/link_replay.h"
#include "emu/link_shaper.h"
#include "emu/route_socket.h"
#include "emu/run_registry.h"

namespace st::emu {

struct EmuNetworkOptions {
  std::string delay = "auto";  // auto (netem when the kernel has it), netem, nfqueue
  std::string kind = "run";    // for the run registry: run, up, test
  std::string description;     // e.g. the scenario file
  double sample_interval_s = 0.1;
};

class EmuNetwork {
 public:
  // Builds everything; on failure removes what was built and rethrows
  // (EmuError naming the step). Needs check_privileges() to pass.
  EmuNetwork(EmulationPlan plan, const EmuNetworkOptions& options);
  ~EmuNetwork();
  EmuNetwork(const EmuNetwork&) = delete;
  EmuNetwork& operator=(const EmuNetwork&) = delete;

  const EmulationPlan& plan() const { return plan_; }
  DelayMethod delay_method() const { return method_; }
  LinkReplay& replay() { return *replay_; }
  double setup_s() const { return setup_s_; }
  // Topology, addresses and shaping, for manifest.json and `emu up`.
  nlohmann::json describe() const;
  // Per direction: bytes and packets that left the bottleneck, queue drops,
  // trace losses; and the sums.
  nlohmann::json counters();
  // Removes everything now (idempotent; the destructor calls it). Returns
  // what it removed.
  CleanupReport teardown();

 private:
  void build(const EmuNetworkOptions& options);
  void configure_namespaces();
  void build_lan();
  void build_wan();
  void build_shaping(const std::string& delay);
  RouteSocket& socket(const std::string& netns);

  EmulationPlan plan_;
  std::unique_ptr<RunRegistration> registration_;
  std::vector<std::string> created_;  // namespaces, in creation order
  std::vector<std::unique_ptr<RouteSocket>> sockets_;
  std::vector<std::unique_ptr<LinkShaper>> shapers_;
  std::unique_ptr<LinkReplay> replay_;
  DelayMethod method_ = DelayMethod::kNfqueue;
  double setup_s_ = 0;
  bool torn_down_ = false;
};

}  // namespace st::emu
