#include "core/runtime/timeline.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>

namespace st::runtime {

void Timeline::add(Span span) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spans_.size() >= max_spans_) {
    ++dropped_;
    return;
  }
  spans_.push_back(std::move(span));
}

std::size_t Timeline::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spans_.size();
}

std::size_t Timeline::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

namespace {

// Chrome's thread ids: the network lane, the CPU, then workers 0, 1, ...
int thread_id(int lane) { return lane + 2; }

std::string lane_name(int lane) {
  if (lane == Timeline::kNetworkLane) return "network (sends)";
  if (lane < 0) return "cpu";
  return fmt::format("worker {} (device)", lane);
}

}  // namespace

void Timeline::write_chrome_trace(const std::string& path) const {
  std::lock_guard<std::mutex> lock(mutex_);
  nlohmann::json events = nlohmann::json::array();
  std::set<std::pair<int, int>> lanes;
  for (const Span& s : spans_) {
    nlohmann::json e = {{"name", s.layer >= 0 ? fmt::format("{} {}", s.name, s.layer) : s.name},
                        {"cat", s.name},
                        {"ph", "X"},
                        {"pid", s.node},
                        {"tid", thread_id(s.lane)},
                        {"ts", std::chrono::duration<double, std::micro>(s.start).count()},
                        {"dur", std::chrono::duration<double, std::micro>(s.end - s.start).count()}};
    nlohmann::json args = nlohmann::json::object();
    if (s.layer >= 0) args["layer"] = s.layer;
    if (s.peer >= 0) args["to"] = s.peer;
    if (s.bytes > 0) args["bytes"] = s.bytes;
    if (!args.empty()) e["args"] = args;
    events.push_back(std::move(e));
    lanes.insert({s.node, s.lane});
  }
  std::set<int> nodes;
  for (const auto& [node, lane] : lanes) {
    nodes.insert(node);
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", node}, {"tid", thread_id(lane)},
                      {"args", {{"name", lane_name(lane)}}}});
  }
  for (int node : nodes)
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", node}, {"args", {{"name", fmt::format("node {}", node)}}}});
  const nlohmann::json trace = {{"traceEvents", events},
                                {"displayTimeUnit", "ms"},
                                {"otherData", {{"spans", spans_.size()}, {"dropped_spans", dropped_}}}};
  std::ofstream out(path);
  if (!(out << trace.dump() << '\n')) throw std::runtime_error(fmt::format("{}: cannot write the timeline", path));
}

void TimelineExecutor::compute(Task work, ComputeCost cost, Task done) {
  auto span = std::make_shared<Timeline::Span>();
  span->name = to_string(cost.kind);
  span->layer = cost.layer;
  span->node = cost.node;
  span->lane = cost.device;
  inner_.compute(
      [this, span, work = std::move(work)] {
        span->start = inner_.now();
        work();
      },
      std::move(cost),
      [this, span, done = std::move(done)] {
        span->end = inner_.now();
        timeline_.add(*span);
        done();
      });
}

}  // namespace st::runtime
