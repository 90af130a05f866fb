#pragma once
// Per WAN direction and per simulated second: the configured rate and what
// the link delivered, for link.csv (DESIGN.md, "Results") and the run summary.
//
// What is counted: every packet that arrives intact at the far end of the
// WAN link (the receiving router's PhyRxEnd), with its full on-the-wire size
// (PPP + IP + TCP headers + payload), so `delivered_mbps` is directly
// comparable with `configured_mbps` (the device serialises exactly those
// bytes at the configured rate). Retransmitted segments count again; the
// payload totals say how much of it was TCP payload.
//
// Which second: the one in which the packet's last bit left the sender
// (arrival time minus the link's propagation delay), so that a rate step
// and its effect land in the same row instead of one delay apart.
//
// No ns-3 here: SimNetwork feeds record_delivery() from the trace source.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/rate_schedule.h"

namespace st::sim {

struct LinkSecond {
  int64_t second = 0;  // row covers [second, second + 1) of network time
  std::string link;    // "a->b" (cluster names)
  double configured_mbps = 0;  // time-weighted mean of the schedule over the row
  double delivered_mbps = 0;   // delivered_bytes * 8 / row length
  uint64_t delivered_bytes = 0;
};

struct LinkTotals {
  std::string link;
  uint64_t wire_bytes = 0;     // everything delivered, headers included
  uint64_t payload_bytes = 0;  // the TCP payload part of it (retransmissions included)
  uint64_t packets = 0;
};

class LinkRecorder {
 public:
  static constexpr const char* kCsvHeader = "second,link,configured_mbps,delivered_mbps,delivered_bytes";

  // Returns the link's index for record_delivery().
  int add_link(std::string name, RateSchedule schedule);
  int link_count() const { return static_cast<int>(links_.size()); }
  const std::string& link_name(int link) const;

  // A packet of `wire_bytes` (payload_bytes of it TCP payload) whose last bit
  // left the sender at `departure_s` (network time) arrived intact.
  void record_delivery(int link, double departure_s, uint32_t wire_bytes, uint32_t payload_bytes);

  // Rows for every link and every second in [0, until_s), link by link; the
  // last row of a link covers only up to until_s (its rates are per the
  // covered time). Packets still in flight at until_s are not counted.
  std::vector<LinkSecond> rows(double until_s) const;
  std::string csv(double until_s) const;
  // Throws std::runtime_error naming the path when it cannot be written.
  void write_csv(const std::string& path, double until_s) const;

  std::vector<LinkTotals> totals() const;

 private:
  struct Link {
    std::string name;
    RateSchedule schedule;
    std::vector<uint64_t> bytes_per_second;
    LinkTotals totals;
  };
  std::vector<Link> links_;
};

}  // namespace st::sim
