#pragma once
// Replays one WAN direction's RateSchedule onto its ns-3 devices (internal
// to sim/): at every step boundary the sending device's DataRate changes
// (SetDataRate affects the next packet to start; the one on the wire keeps
// its rate), a 0 Mbps step closes the WanQueueDisc gate instead (see
// wan_queue_disc.h), a step's loss probability goes to a RateErrorModel on
// the receiving device, and a step's delay (if the trace gives one, and this
// direction drives the link's shared delay) goes to the channel.
//
// The walk over the schedule is net/schedule_walker.h's, the emulator's
// too; here its clock is the simulator's event queue (Ns3ReplayClock), so
// only the next boundary is ever scheduled and a looping trace costs one
// pending event. Events hold a weak reference: a replay destroyed while the
// simulator still runs is simply not called.
#include <ns3/core-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

#include <map>
#include <memory>

#include "net/rate_schedule.h"
#include "net/schedule_walker.h"
#include "sim/wan_queue_disc.h"

namespace st::sim {

using net::RateSchedule;

// Network time on the simulator's clock: simulated seconds since `origin_s`.
class Ns3ReplayClock final : public net::ReplayClock {
 public:
  explicit Ns3ReplayClock(double origin_s) : origin_s_(origin_s) {}
  double now_s() const override;
  uint64_t call_at(double at_s, std::function<void()> fn) override;
  void cancel(uint64_t handle) override;

 private:
  double origin_s_;
  uint64_t next_handle_ = 0;
  std::shared_ptr<std::map<uint64_t, ns3::EventId>> pending_ = std::make_shared<std::map<uint64_t, ns3::EventId>>();
};

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

class DirectionReplay {
 public:
  // `clock`: network time on the simulator (it outlives the replay).
  // `loss_stream`: the ns-3 random stream for this direction's loss draws
  // (fixed per direction, so runs are reproducible).
  DirectionReplay(RateSchedule schedule, DirectionDevices devices, std::shared_ptr<WanLinkDelay> link,
                  bool drives_delay, Ns3ReplayClock& clock, int64_t loss_stream);
  // Applies the step in force now and schedules the next boundary.
  void start() { walker_.start(); }
  void stop() { walker_.stop(); }

 private:
  void apply(const traces::TraceStep& step);

  DirectionDevices devices_;
  std::shared_ptr<WanLinkDelay> link_;
  bool drives_delay_;
  ns3::Ptr<ns3::RateErrorModel> loss_;  // only when some step has loss
  net::ScheduleWalker walker_;
};

}  // namespace st::sim
