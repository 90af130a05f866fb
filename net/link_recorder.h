#pragma once
// Per WAN direction and per second of network time: the configured rate and
// what the link delivered, for link.csv and the run summary. Shared by the
// backends, so both write the same file (docs/sim-network.md, docs/emu.md).
//
// What is counted: the bytes the bottleneck sent, with their full wire size,
// so `delivered_mbps` is directly comparable with `configured_mbps` (the
// shaper paces exactly those bytes at the configured rate). sim/ counts
// every packet that arrives intact at the far router (PPP + IP + TCP
// headers + payload; record_delivery); emu/ reads the HTB class's byte
// counter (Ethernet + IP + TCP headers + payload) at short intervals
// (record_interval). Retransmitted segments count again.
//
// Which second: the one in which the bytes left the bottleneck (sim: the
// arrival time minus the link's propagation delay), so that a rate step and
// its effect land in the same row instead of one delay apart.
#include <cstdint>
#include <string>
#include <vector>

#include "net/rate_schedule.h"

namespace st::net {

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
  uint64_t payload_bytes = 0;  // the TCP payload part of it (retransmissions included; 0 when not known)
  uint64_t packets = 0;
};

class LinkRecorder {
 public:
  static constexpr const char* kCsvHeader = "second,link,configured_mbps,delivered_mbps,delivered_bytes";

  // Returns the link's index for record_delivery().
  int add_link(std::string name, RateSchedule schedule);

  // A packet of `wire_bytes` (payload_bytes of it TCP payload) whose last bit
  // left the sender at `departure_s` (network time) arrived intact.
  void record_delivery(int link, double departure_s, uint32_t wire_bytes, uint32_t payload_bytes);
  // `wire_bytes` (in `packets` packets) left the bottleneck during
  // [start_s, end_s): spread over the seconds it overlaps in proportion to
  // the overlap (a counter sampled at short intervals).
  // `payload_bytes`: the TCP payload part, when the caller knows it.
  void record_interval(int link, double start_s, double end_s, uint64_t wire_bytes, uint64_t packets,
                       uint64_t payload_bytes = 0);

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

}  // namespace st::net
