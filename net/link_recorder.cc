#include "net/link_recorder.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace st::net {

int LinkRecorder::add_link(std::string name, RateSchedule schedule) {
  Link link;
  link.totals.link = name;
  link.name = std::move(name);
  link.schedule = std::move(schedule);
  links_.push_back(std::move(link));
  return static_cast<int>(links_.size()) - 1;
}

void LinkRecorder::record_delivery(int link, double departure_s, uint32_t wire_bytes, uint32_t payload_bytes) {
  Link& target = links_.at(static_cast<std::size_t>(link));
  // A packet that left a hair before time 0 (rounding) belongs to second 0.
  const auto second = static_cast<std::size_t>(std::max(0.0, std::floor(departure_s)));
  if (second >= target.bytes_per_second.size()) target.bytes_per_second.resize(second + 1, 0);
  target.bytes_per_second[second] += wire_bytes;
  target.totals.wire_bytes += wire_bytes;
  target.totals.payload_bytes += payload_bytes;
  target.totals.packets += 1;
}

void LinkRecorder::record_interval(int link, double start_s, double end_s, uint64_t wire_bytes, uint64_t packets,
                                   uint64_t payload_bytes) {
  Link& target = links_.at(static_cast<std::size_t>(link));
  target.totals.wire_bytes += wire_bytes;
  target.totals.payload_bytes += payload_bytes;
  target.totals.packets += packets;
  start_s = std::max(0.0, start_s);
  end_s = std::max(start_s, end_s);
  const auto first = static_cast<std::size_t>(std::floor(start_s));
  const auto last = end_s > start_s ? static_cast<std::size_t>(std::ceil(end_s)) - 1 : first;
  if (last >= target.bytes_per_second.size()) target.bytes_per_second.resize(last + 1, 0);
  // Each second gets the difference of the rounded cumulative shares at its
  // boundaries, so the rows add up to exactly wire_bytes.
  uint64_t given = 0;
  for (std::size_t second = first; second <= last; ++second) {
    const double boundary = std::min(end_s, second + 1.0);
    const uint64_t cumulative =
        second == last ? wire_bytes
                       : static_cast<uint64_t>(std::llround(static_cast<double>(wire_bytes) * (boundary - start_s) /
                                                            (end_s - start_s)));
    target.bytes_per_second[second] += cumulative - given;
    given = cumulative;
  }
}

std::vector<LinkSecond> LinkRecorder::rows(double until_s) const {
  std::vector<LinkSecond> result;
  if (!(until_s > 0)) return result;
  const auto seconds = static_cast<int64_t>(std::ceil(until_s));
  for (const Link& link : links_) {
    for (int64_t second = 0; second < seconds; ++second) {
      const double start = static_cast<double>(second);
      const double length = std::min(start + 1.0, until_s) - start;
      LinkSecond row;
      row.second = second;
      row.link = link.name;
      row.configured_mbps = link.schedule.mean_mbps(start, start + length);
      const auto index = static_cast<std::size_t>(second);
      row.delivered_bytes = index < link.bytes_per_second.size() ? link.bytes_per_second[index] : 0;
      row.delivered_mbps = static_cast<double>(row.delivered_bytes) * 8.0 / 1e6 / length;
      result.push_back(std::move(row));
    }
  }
  return result;
}

std::string LinkRecorder::csv(double until_s) const {
  std::string text = std::string(kCsvHeader) + "\n";
  for (const LinkSecond& row : rows(until_s))
    text += fmt::format("{},{},{:.6f},{:.6f},{}\n", row.second, row.link, row.configured_mbps, row.delivered_mbps,
                        row.delivered_bytes);
  return text;
}

void LinkRecorder::write_csv(const std::string& path, double until_s) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(fmt::format("link recorder: cannot write {}: {}", path, std::strerror(errno)));
  out << csv(until_s);
  out.close();
  if (!out) throw std::runtime_error(fmt::format("link recorder: writing {} failed", path));
}

std::vector<LinkTotals> LinkRecorder::totals() const {
  std::vector<LinkTotals> result;
  for (const Link& link : links_) result.push_back(link.totals);
  return result;
}

}  // namespace st::net
