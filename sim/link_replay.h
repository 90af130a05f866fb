#pragma once
// Replays one WAN direction's RateSchedule onto its ns-3 devices (internal
// to sim/): at every step boundary the sending device's DataRate changes
// (SetDataRate affects the next packet to start; the one on the wire keeps
// its rate), a 0 Mbps step closes the WanQueueDisc gate instead (see
// wan_queue_disc.h), a step's loss probability goes to a RateErrorModel on
// the receiving device, and a step's delay (if the trace gives one, and this
// direction drives the link's shared delay) goes to the channel.
//
// Only the next boundary is ever scheduled, so a looping trace costs one
// pending event. Events hold a weak reference: a replay destroyed while the
// simulator still runs is simply not called.
#include <ns3/core-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

#include <memory>

#include "net/rate_schedule.h"
#include "sim/wan_queue_disc.h"

namespace st::sim {

using net::RateSchedule;

// One WAN link's shared propagation delay, read by the recorder.
struct WanLinkDelay {
  ns3::Ptr<ns3::PointToPointChannel> channel;
  double base_delay_s = 0;
  double delay_s = 0;
};

struct DirectionDevices {
  ns3::Ptr<ns3::PointToPointNetDevice> sender;
  ns3::Ptr<ns3::PointToPointNetDevice> receiver;
  ns3::Ptr<WanQueueDisc> queue;
};

class DirectionReplay : public std::enable_shared_from_this<DirectionReplay> {
 public:
  // `origin_s`: simulated time (s) of network time 0. `loss_stream`: the
  // ns-3 random stream for this direction's loss draws (fixed per direction,
  // so runs are reproducible).
  DirectionReplay(RateSchedule schedule, DirectionDevices devices, std::shared_ptr<WanLinkDelay> link,
                  bool drives_delay, double origin_s, int64_t loss_stream);
  // Applies the step in force now and schedules the next boundary.
  void start();
  void stop();

 private:
  void apply(const RateSchedule::Segment& segment);
  void schedule_after(const RateSchedule::Segment& segment);

  RateSchedule schedule_;
  DirectionDevices devices_;
  std::shared_ptr<WanLinkDelay> link_;
  bool drives_delay_;
  double origin_s_;
  ns3::Ptr<ns3::RateErrorModel> loss_;  // only when some step has loss
  ns3::EventId next_;
  bool stopped_ = false;
};

}  // namespace st::sim
