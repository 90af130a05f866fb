#include "sim/wan_queue_disc.h"

#include <ns3/drop-tail-queue.h>
#include <ns3/object-factory.h>
#include <ns3/object-base.h>

namespace st::sim {

// Registers the TypeId when the library loads, as ns-3's own models do, so
// the queue disc can be found by name (TypeId::LookupByName, attribute
// paths, ns3::ObjectFactory) before anything has created one.
NS_OBJECT_ENSURE_REGISTERED(WanQueueDisc);

ns3::TypeId WanQueueDisc::GetTypeId() {
  static ns3::TypeId type = ns3::TypeId("st::sim::WanQueueDisc")
                                .SetParent<ns3::QueueDisc>()
                                .SetGroupName("TrafficControl")
                                .AddConstructor<WanQueueDisc>();
  return type;
}

WanQueueDisc::WanQueueDisc() : ns3::QueueDisc(ns3::QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}

void WanQueueDisc::SetOpen(bool open) {
  const bool opening = open && !open_;
  open_ = open;
  if (opening) Run();
}

bool WanQueueDisc::DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) {
  if (GetCurrentSize() + item > GetMaxSize()) {
    DropBeforeEnqueue(item, kLimitExceededDrop);
    return false;
  }
  return GetInternalQueue(0)->Enqueue(item);
}

ns3::Ptr<ns3::QueueDiscItem> WanQueueDisc::DoDequeue() {
  if (!open_) return nullptr;
  return GetInternalQueue(0)->Dequeue();
}

ns3::Ptr<const ns3::QueueDiscItem> WanQueueDisc::DoPeek() {
  if (!open_) return nullptr;
  return GetInternalQueue(0)->Peek();
}

bool WanQueueDisc::CheckConfig() {
  if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
  if (GetNInternalQueues() == 0)
    AddInternalQueue(ns3::CreateObjectWithAttributes<ns3::DropTailQueue<ns3::QueueDiscItem>>(
        "MaxSize", ns3::QueueSizeValue(GetMaxSize())));
  return GetNInternalQueues() == 1;
}

}  // namespace st::sim
