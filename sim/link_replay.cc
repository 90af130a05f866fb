#include "sim/link_replay.h"

#include <algorithm>
#include <cmath>

namespace st::sim {
namespace {

bool has_loss(const RateSchedule& schedule) {
  const auto& steps = schedule.trace().steps();
  return std::any_of(steps.begin(), steps.end(), [](const auto& step) { return step.loss > 0; });
}

}  // namespace

DirectionReplay::DirectionReplay(RateSchedule schedule, DirectionDevices devices, std::shared_ptr<WanLinkDelay> link,
                                 bool drives_delay, double origin_s, int64_t loss_stream)
    : schedule_(std::move(schedule)),
      devices_(std::move(devices)),
      link_(std::move(link)),
      drives_delay_(drives_delay),
      origin_s_(origin_s) {
  if (has_loss(schedule_)) {
    loss_ = ns3::CreateObject<ns3::RateErrorModel>();
    loss_->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
    loss_->SetRate(0);
    auto draws = ns3::CreateObject<ns3::UniformRandomVariable>();
    draws->SetStream(loss_stream);
    loss_->SetRandomVariable(draws);
    devices_.receiver->SetReceiveErrorModel(loss_);
  }
}

void DirectionReplay::start() {
  const double now_s = ns3::Simulator::Now().GetSeconds() - origin_s_;
  const RateSchedule::Segment segment = schedule_.segment_at(now_s);
  apply(segment);
  schedule_after(segment);
}

void DirectionReplay::stop() {
  stopped_ = true;
  ns3::Simulator::Cancel(next_);
}

void DirectionReplay::apply(const RateSchedule::Segment& segment) {
  const traces::TraceStep step = schedule_.step(segment);
  if (step.mbps > 0) {
    devices_.sender->SetDataRate(ns3::DataRate(static_cast<uint64_t>(std::llround(step.mbps * 1e6))));
    devices_.queue->SetOpen(true);
  } else {
    devices_.queue->SetOpen(false);  // keeps the previous rate for what the device already holds
  }
  if (loss_) loss_->SetRate(step.loss);
  if (drives_delay_) {
    const double delay_s = step.delay_ms >= 0 ? step.delay_ms / 1000 : link_->base_delay_s;
    if (delay_s != link_->delay_s) {
      link_->channel->SetAttribute("Delay", ns3::TimeValue(ns3::Seconds(delay_s)));
      link_->delay_s = delay_s;
    }
  }
}

void DirectionReplay::schedule_after(const RateSchedule::Segment& segment) {
  if (schedule_.constant() || stopped_) return;
  const RateSchedule::Segment following = schedule_.next(segment);
  const ns3::Time at = ns3::Seconds(origin_s_ + following.start_s);
  const ns3::Time wait = std::max(at - ns3::Simulator::Now(), ns3::Time(0));
  std::weak_ptr<DirectionReplay> weak = weak_from_this();
  next_ = ns3::Simulator::Schedule(wait, [weak, following]() {
    if (auto self = weak.lock()) {
      self->apply(following);
      self->schedule_after(following);
    }
  });
}

}  // namespace st::sim
