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

double Ns3ReplayClock::now_s() const { return ns3::Simulator::Now().GetSeconds() - origin_s_; }

uint64_t Ns3ReplayClock::call_at(double at_s, std::function<void()> fn) {
  const ns3::Time at = ns3::Seconds(origin_s_ + at_s);
  const ns3::Time wait = std::max(at - ns3::Simulator::Now(), ns3::Time(0));
  const uint64_t handle = next_handle_++;
  std::weak_ptr<std::map<uint64_t, ns3::EventId>> pending = pending_;
  (*pending_)[handle] = ns3::Simulator::Schedule(wait, [pending, handle, fn = std::move(fn)]() {
    auto events = pending.lock();
    if (!events) return;  // the clock is gone
    events->erase(handle);
    fn();
  });
  return handle;
}

void Ns3ReplayClock::cancel(uint64_t handle) {
  const auto it = pending_->find(handle);
  if (it == pending_->end()) return;
  ns3::Simulator::Cancel(it->second);
  pending_->erase(it);
}

DirectionReplay::DirectionReplay(RateSchedule schedule, DirectionDevices devices, std::shared_ptr<WanLinkDelay> link,
                                 bool drives_delay, Ns3ReplayClock& clock, int64_t loss_stream)
    : devices_(std::move(devices)),
      link_(std::move(link)),
      drives_delay_(drives_delay),
      walker_(std::move(schedule), clock,
              [this](const traces::TraceStep& step, double, bool) { apply(step); }) {
  if (has_loss(walker_.schedule())) {
    loss_ = ns3::CreateObject<ns3::RateErrorModel>();
    loss_->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
    loss_->SetRate(0);
    auto draws = ns3::CreateObject<ns3::UniformRandomVariable>();
    draws->SetStream(loss_stream);
    loss_->SetRandomVariable(draws);
    devices_.receiver->SetReceiveErrorModel(loss_);
  }
}

void DirectionReplay::apply(const traces::TraceStep& step) {
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

}  // namespace st::sim
