#pragma once
// The bottleneck queue of one WAN direction: a byte-limited drop-tail FIFO
// with a gate. ns-3 cannot send at 0 bit/s (a zero DataRate divides by zero
// and a tiny one makes the packet then on the wire take minutes, even after
// the rate comes back), so a 0 Mbps trace step closes the gate instead:
// packets wait here (and overflow is dropped as usual) until a positive step
// opens it again. While closed, only what the device already holds leaves
// (the packet on the wire and at most one in the device's 1-packet queue,
// at the previous rate). Internal to sim/ (ns-3 header).
#include <ns3/queue-disc.h>

namespace st::sim {

class WanQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  WanQueueDisc();

  // Opening restarts dequeueing at once.
  void SetOpen(bool open);

  static constexpr const char* kLimitExceededDrop = "WAN buffer full";

 private:
  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  ns3::Ptr<const ns3::QueueDiscItem> DoPeek() override;
  bool CheckConfig() override;
  void InitializeParams() override {}

  bool open_ = true;
};

}  // namespace st::sim
