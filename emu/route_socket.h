#pragma once
// A NETLINK_ROUTE socket bound to one network namespace, and the handful of
// rtnetlink operations the emulator needs, through libnl-route-3: veth
// pairs, addresses, routes, and the qdiscs and classes that shape a link
// (HTB, TBF, bfifo, netem). Every failure throws EmuError naming the
// namespace, the object and libnl's message. libnl's types stay in the .cc.
#include <cstdint>
#include <memory>
#include <string>

#include "emu/netns.h"

namespace st::emu {

// tc handles, major:minor as in `tc` ("1:1" is tc_handle(1, 1)).
constexpr uint32_t tc_handle(uint32_t major, uint32_t minor) { return (major << 16) | minor; }

struct TcCounters {
  uint64_t bytes = 0;    // sent (left the class or qdisc), with Ethernet, IP and TCP headers
  uint64_t packets = 0;
  uint64_t drops = 0;
};

class RouteSocket {
 public:
  // Opens the socket inside `netns` (a name under /run/netns).
  explicit RouteSocket(const std::string& netns);
  ~RouteSocket();
  RouteSocket(const RouteSocket&) = delete;
  RouteSocket& operator=(const RouteSocket&) = delete;

  const std::string& netns() const { return netns_; }

  // A veth pair whose ends are created directly in the given namespaces
  // (the socket's own namespace never sees them).
  void add_veth(const std::string& name, const std::string& name_netns, const std::string& peer,
                const std::string& peer_netns, int mtu);
  int ifindex(const std::string& ifname);
  void set_up(const std::string& ifname);
  void add_address(const std::string& ifname, const std::string& cidr);  // "10.1.0.1/30"
  // `destination` "10.2.0.0/16" or "default", via `gateway` on `ifname`;
  // `congestion_control` (optional) for every TCP connection using it (the
  // route's congctl): unlike the namespace's default, a route's choice is
  // not limited to the host's net.ipv4.tcp_allowed_congestion_control.
  // `rto_min_ms` > 0: the route's locked rto_min: those connections time
  // out no sooner than srtt + this (Linux's own rto_min is 200 ms).
  void add_route(const std::string& destination, const std::string& gateway, const std::string& ifname,
                 const std::string& congestion_control = "", int rto_min_ms = 0);

  // Root HTB qdisc (handle major:0) whose unclassified traffic goes to
  // `default_class`.
  void add_htb_root(const std::string& ifname, uint32_t handle, uint32_t default_class);
  // Creates or changes an HTB class: rate = ceil = `bytes_per_second`,
  // burst `burst_bytes` for both, explicit quantum.
  void set_htb_class(const std::string& ifname, uint32_t parent, uint32_t classid, uint64_t bytes_per_second,
                     uint32_t burst_bytes, uint32_t quantum);
  // Creates (`create`) or changes a TBF qdisc in place (its queue is kept).
  void set_tbf(const std::string& ifname, uint32_t parent, uint32_t handle, int bytes_per_second, int bucket_bytes,
               int limit_bytes, bool create);
  void add_bfifo(const std::string& ifname, uint32_t parent, uint32_t handle, int limit_bytes);
  // Creates or changes a netem qdisc: one-way delay, loss probability,
  // queue limit in packets. Throws EmuError whose message starts with
  // "netem unavailable" when the kernel has no sch_netem.
  void set_netem(const std::string& ifname, uint32_t parent, uint32_t handle, double delay_ms, double loss,
                 int limit_packets, bool create);

  // Removes the root qdisc of `ifname` (the device's default returns).
  void delete_root_qdisc(const std::string& ifname);

  TcCounters class_counters(const std::string& ifname, uint32_t classid);
  TcCounters qdisc_counters(const std::string& ifname, uint32_t handle);

 private:
  struct Handle;
  std::string netns_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace st::emu
