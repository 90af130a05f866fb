#include "emu/route_socket.h"

#include <fmt/format.h>
#include <linux/if.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/class.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/fifo.h>
#include <netlink/route/qdisc/htb.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/qdisc/tbf.h>
#include <netlink/route/route.h>
#include <netlink/route/tc.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace st::emu {
namespace {

// libnl objects are reference counted; these give them a scope.
template <typename T, void (*Put)(T*)>
struct Owned {
  T* object = nullptr;
  explicit Owned(T* o) : object(o) {}
  ~Owned() {
    if (object != nullptr) Put(object);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  T* get() const { return object; }
};

void put_link(rtnl_link* l) { rtnl_link_put(l); }
void put_addr(rtnl_addr* a) { rtnl_addr_put(a); }
void put_route(rtnl_route* r) { rtnl_route_put(r); }
void put_qdisc(rtnl_qdisc* q) { rtnl_qdisc_put(q); }
void put_class(rtnl_class* c) { rtnl_class_put(c); }
void put_nladdr(nl_addr* a) { nl_addr_put(a); }
void put_cache(nl_cache* c) { nl_cache_free(c); }

using Link = Owned<rtnl_link, put_link>;
using Addr = Owned<rtnl_addr, put_addr>;
using Route = Owned<rtnl_route, put_route>;
using Qdisc = Owned<rtnl_qdisc, put_qdisc>;
using Class = Owned<rtnl_class, put_class>;
using NlAddr = Owned<nl_addr, put_nladdr>;
using Cache = Owned<nl_cache, put_cache>;

std::string handle_text(uint32_t handle) { return fmt::format("{:x}:{:x}", handle >> 16, handle & 0xffff); }

}  // namespace

struct RouteSocket::Handle {
  nl_sock* sock = nullptr;
  std::map<std::string, int> ifindex;  // names never change during a run
  ~Handle() {
    if (sock != nullptr) nl_socket_free(sock);
  }
};

RouteSocket::RouteSocket(const std::string& netns) : netns_(netns), handle_(std::make_unique<Handle>()) {
  NetnsScope scope(netns);
  handle_->sock = nl_socket_alloc();
  if (handle_->sock == nullptr) throw EmuError(fmt::format("{}: cannot allocate a netlink socket", netns));
  const int err = nl_connect(handle_->sock, NETLINK_ROUTE);
  if (err < 0) throw EmuError(fmt::format("{}: cannot open NETLINK_ROUTE: {}", netns, nl_geterror(err)));
}

RouteSocket::~RouteSocket() = default;

namespace {
void check(int err, const std::string& netns, const std::string& what) {
  if (err < 0) throw EmuError(fmt::format("{}: {}: {}", netns, what, nl_geterror(err)));
}
}  // namespace

void RouteSocket::add_veth(const std::string& name, const std::string& name_netns, const std::string& peer,
                           const std::string& peer_netns, int mtu) {
  const UniqueFd name_fd = open_netns(name_netns);
  const UniqueFd peer_fd = open_netns(peer_netns);
  rtnl_link* link = rtnl_link_veth_alloc();
  if (link == nullptr) throw EmuError("cannot allocate a veth link");
  rtnl_link* peer_link = rtnl_link_veth_get_peer(link);
  rtnl_link_set_name(link, name.c_str());
  rtnl_link_set_ns_fd(link, name_fd.get());
  rtnl_link_set_mtu(link, static_cast<unsigned>(mtu));
  rtnl_link_set_name(peer_link, peer.c_str());
  rtnl_link_set_ns_fd(peer_link, peer_fd.get());
  rtnl_link_set_mtu(peer_link, static_cast<unsigned>(mtu));
  const int err = rtnl_link_add(handle_->sock, link, NLM_F_CREATE | NLM_F_EXCL);
  rtnl_link_put(peer_link);
  rtnl_link_veth_release(link);
  check(err, netns_, fmt::format("create veth pair {} ({}) <-> {} ({})", name, name_netns, peer, peer_netns));
}

int RouteSocket::ifindex(const std::string& ifname) {
  const auto known = handle_->ifindex.find(ifname);
  if (known != handle_->ifindex.end()) return known->second;
  rtnl_link* found = nullptr;
  check(rtnl_link_get_kernel(handle_->sock, 0, ifname.c_str(), &found), netns_, fmt::format("find interface {}", ifname));
  const Link link(found);
  const int index = rtnl_link_get_ifindex(link.get());
  handle_->ifindex[ifname] = index;
  return index;
}

void RouteSocket::set_up(const std::string& ifname) {
  rtnl_link* found = nullptr;
  check(rtnl_link_get_kernel(handle_->sock, 0, ifname.c_str(), &found), netns_, fmt::format("find interface {}", ifname));
  const Link current(found);
  const Link change(rtnl_link_alloc());
  rtnl_link_set_flags(change.get(), IFF_UP);
  check(rtnl_link_change(handle_->sock, current.get(), change.get(), 0), netns_, fmt::format("bring {} up", ifname));
}

void RouteSocket::add_address(const std::string& ifname, const std::string& cidr) {
  const Addr addr(rtnl_addr_alloc());
  nl_addr* parsed = nullptr;
  check(nl_addr_parse(cidr.c_str(), AF_INET, &parsed), netns_, fmt::format("parse address {}", cidr));
  const NlAddr local(parsed);
  rtnl_addr_set_ifindex(addr.get(), ifindex(ifname));
  check(rtnl_addr_set_local(addr.get(), local.get()), netns_, fmt::format("set address {}", cidr));
  check(rtnl_addr_add(handle_->sock, addr.get(), 0), netns_, fmt::format("add address {} to {}", cidr, ifname));
}

void RouteSocket::add_route(const std::string& destination, const std::string& gateway, const std::string& ifname,
                            const std::string& congestion_control, int rto_min_ms) {
  const Route route(rtnl_route_alloc());
  nl_addr* dst = nullptr;
  const std::string dst_text = destination == "default" ? "0.0.0.0/0" : destination;
  check(nl_addr_parse(dst_text.c_str(), AF_INET, &dst), netns_, fmt::format("parse route {}", destination));
  const NlAddr dst_owned(dst);
  nl_addr* gw = nullptr;
  check(nl_addr_parse(gateway.c_str(), AF_INET, &gw), netns_, fmt::format("parse gateway {}", gateway));
  const NlAddr gw_owned(gw);
  rtnl_route_set_family(route.get(), AF_INET);
  rtnl_route_set_table(route.get(), RT_TABLE_MAIN);
  rtnl_route_set_protocol(route.get(), RTPROT_STATIC);
  check(rtnl_route_set_dst(route.get(), dst_owned.get()), netns_, "set route destination");
  rtnl_nexthop* hop = rtnl_route_nh_alloc();  // owned by the route once added to it
  rtnl_route_nh_set_ifindex(hop, ifindex(ifname));
  rtnl_route_nh_set_gateway(hop, gw_owned.get());
  rtnl_route_add_nexthop(route.get(), hop);
  const std::string what = fmt::format("add route {} via {} dev {}{}{}", destination, gateway, ifname,
                                       congestion_control.empty() ? "" : " congctl " + congestion_control,
                                       rto_min_ms > 0 ? fmt::format(" rto_min lock {}ms", rto_min_ms) : "");
  nl_msg* message = nullptr;
  check(rtnl_route_build_add_request(route.get(), NLM_F_CREATE | NLM_F_EXCL, &message), netns_, what);
  if (!congestion_control.empty() || rto_min_ms > 0) {
    // libnl-route-3 knows only numeric route metrics and no locks, and
    // RTAX_CC_ALGO is a string, so the RTA_METRICS nest is added to libnl's
    // message by hand. TCP reads a route's rto_min only when it is locked
    // (tcp_rto_min in the kernel), as `ip route ... rto_min` sets it.
    nlattr* metrics = nla_nest_start(message, RTA_METRICS);
    bool ok = metrics != nullptr;
    if (ok && !congestion_control.empty()) ok = nla_put_string(message, RTAX_CC_ALGO, congestion_control.c_str()) >= 0;
    if (ok && rto_min_ms > 0)
      ok = nla_put_u32(message, RTAX_LOCK, 1u << RTAX_RTO_MIN) >= 0 &&
           nla_put_u32(message, RTAX_RTO_MIN, static_cast<uint32_t>(rto_min_ms)) >= 0;
    if (!ok) {
      nlmsg_free(message);
      throw EmuError(fmt::format("{}: {}: message too long", netns_, what));
    }
    nla_nest_end(message, metrics);
  }
  check(nl_send_sync(handle_->sock, message), netns_, what);  // sends, waits for the ack, frees
}

void RouteSocket::add_htb_root(const std::string& ifname, uint32_t handle, uint32_t default_class) {
  const Qdisc qdisc(rtnl_qdisc_alloc());
  rtnl_tc_set_ifindex(TC_CAST(qdisc.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(qdisc.get()), TC_H_ROOT);
  rtnl_tc_set_handle(TC_CAST(qdisc.get()), handle);
  check(rtnl_tc_set_kind(TC_CAST(qdisc.get()), "htb"), netns_, "htb qdisc kind");
  rtnl_htb_set_defcls(qdisc.get(), TC_H_MIN(default_class));  // the kernel reads the minor number
  check(rtnl_qdisc_add(handle_->sock, qdisc.get(), NLM_F_CREATE | NLM_F_EXCL), netns_,
        fmt::format("add root htb {} on {}", handle_text(handle), ifname));
}

void RouteSocket::set_htb_class(const std::string& ifname, uint32_t parent, uint32_t classid, uint64_t bytes_per_second,
                                uint32_t burst_bytes, uint32_t quantum) {
  const Class cls(rtnl_class_alloc());
  rtnl_tc_set_ifindex(TC_CAST(cls.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(cls.get()), parent);
  rtnl_tc_set_handle(TC_CAST(cls.get()), classid);
  check(rtnl_tc_set_kind(TC_CAST(cls.get()), "htb"), netns_, "htb class kind");
  rtnl_htb_set_rate64(cls.get(), bytes_per_second);
  rtnl_htb_set_ceil64(cls.get(), bytes_per_second);
  rtnl_htb_set_rbuffer(cls.get(), burst_bytes);
  rtnl_htb_set_cbuffer(cls.get(), burst_bytes);
  rtnl_htb_set_quantum(cls.get(), quantum);
  // NLM_F_CREATE without NLM_F_EXCL: creates the class, or changes it in place.
  check(rtnl_class_add(handle_->sock, cls.get(), NLM_F_CREATE), netns_,
        fmt::format("set htb class {} on {} to {} B/s", handle_text(classid), ifname, bytes_per_second));
}

void RouteSocket::set_tbf(const std::string& ifname, uint32_t parent, uint32_t handle, int bytes_per_second,
                          int bucket_bytes, int limit_bytes, bool create) {
  const Qdisc qdisc(rtnl_qdisc_alloc());
  rtnl_tc_set_ifindex(TC_CAST(qdisc.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(qdisc.get()), parent);
  rtnl_tc_set_handle(TC_CAST(qdisc.get()), handle);
  check(rtnl_tc_set_kind(TC_CAST(qdisc.get()), "tbf"), netns_, "tbf qdisc kind");
  rtnl_qdisc_tbf_set_limit(qdisc.get(), limit_bytes);
  rtnl_qdisc_tbf_set_rate(qdisc.get(), bytes_per_second, bucket_bytes, 0);
  // Without NLM_F_CREATE the existing qdisc with this parent and handle is
  // changed in place (the kernel's "change" path keeps its queue).
  check(rtnl_qdisc_add(handle_->sock, qdisc.get(), create ? NLM_F_CREATE | NLM_F_EXCL : 0), netns_,
        fmt::format("{} tbf {} on {} ({} B/s, bucket {} B)", create ? "add" : "change", handle_text(handle), ifname,
                    bytes_per_second, bucket_bytes));
}

void RouteSocket::add_bfifo(const std::string& ifname, uint32_t parent, uint32_t handle, int limit_bytes) {
  const Qdisc qdisc(rtnl_qdisc_alloc());
  rtnl_tc_set_ifindex(TC_CAST(qdisc.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(qdisc.get()), parent);
  rtnl_tc_set_handle(TC_CAST(qdisc.get()), handle);
  check(rtnl_tc_set_kind(TC_CAST(qdisc.get()), "bfifo"), netns_, "bfifo qdisc kind");
  check(rtnl_qdisc_fifo_set_limit(qdisc.get(), limit_bytes), netns_, "bfifo limit");
  check(rtnl_qdisc_add(handle_->sock, qdisc.get(), NLM_F_CREATE | NLM_F_EXCL), netns_,
        fmt::format("add bfifo {} (limit {} B) on {}", handle_text(handle), limit_bytes, ifname));
}

void RouteSocket::set_netem(const std::string& ifname, uint32_t parent, uint32_t handle, double delay_ms, double loss,
                            int limit_packets, bool create) {
  const Qdisc qdisc(rtnl_qdisc_alloc());
  rtnl_tc_set_ifindex(TC_CAST(qdisc.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(qdisc.get()), parent);
  rtnl_tc_set_handle(TC_CAST(qdisc.get()), handle);
  check(rtnl_tc_set_kind(TC_CAST(qdisc.get()), "netem"), netns_, "netem qdisc kind");
  rtnl_netem_set_delay(qdisc.get(), static_cast<int>(std::lround(delay_ms * 1000)));
  // The kernel's loss is a u32 fraction of 2^32 - 1; libnl passes it as int.
  const auto raw_loss = static_cast<uint32_t>(std::llround(std::clamp(loss, 0.0, 1.0) * 4294967295.0));
  rtnl_netem_set_loss(qdisc.get(), static_cast<int>(raw_loss));
  rtnl_netem_set_limit(qdisc.get(), limit_packets);
  const int err = rtnl_qdisc_add(handle_->sock, qdisc.get(), create ? NLM_F_CREATE | NLM_F_EXCL : 0);
  if (err == -NLE_OBJ_NOTFOUND || err == -NLE_OPNOTSUPP)
    throw EmuError(fmt::format("netem unavailable: {}: add netem on {}: {} (the kernel has no sch_netem)", netns_, ifname,
                               nl_geterror(err)));
  check(err, netns_, fmt::format("{} netem {} on {}", create ? "add" : "change", handle_text(handle), ifname));
}

void RouteSocket::delete_root_qdisc(const std::string& ifname) {
  const Qdisc qdisc(rtnl_qdisc_alloc());
  rtnl_tc_set_ifindex(TC_CAST(qdisc.get()), ifindex(ifname));
  rtnl_tc_set_parent(TC_CAST(qdisc.get()), TC_H_ROOT);
  check(rtnl_qdisc_delete(handle_->sock, qdisc.get()), netns_, fmt::format("delete the root qdisc of {}", ifname));
}

namespace {
TcCounters counters_of(rtnl_tc* tc) {
  TcCounters c;
  c.bytes = rtnl_tc_get_stat(tc, RTNL_TC_BYTES);
  c.packets = rtnl_tc_get_stat(tc, RTNL_TC_PACKETS);
  c.drops = rtnl_tc_get_stat(tc, RTNL_TC_DROPS);
  return c;
}
}  // namespace

TcCounters RouteSocket::class_counters(const std::string& ifname, uint32_t classid) {
  const int index = ifindex(ifname);
  nl_cache* raw = nullptr;
  check(rtnl_class_alloc_cache(handle_->sock, index, &raw), netns_, fmt::format("read the classes of {}", ifname));
  const Cache cache(raw);
  rtnl_class* found = rtnl_class_get(cache.get(), index, classid);
  if (found == nullptr) throw EmuError(fmt::format("{}: no class {} on {}", netns_, handle_text(classid), ifname));
  const Class cls(found);
  return counters_of(TC_CAST(cls.get()));
}

TcCounters RouteSocket::qdisc_counters(const std::string& ifname, uint32_t handle) {
  const int index = ifindex(ifname);
  nl_cache* raw = nullptr;
  check(rtnl_qdisc_alloc_cache(handle_->sock, &raw), netns_, "read the qdiscs");
  const Cache cache(raw);
  rtnl_qdisc* found = rtnl_qdisc_get(cache.get(), index, handle);
  if (found == nullptr) throw EmuError(fmt::format("{}: no qdisc {} on {}", netns_, handle_text(handle), ifname));
  const Qdisc qdisc(found);
  return counters_of(TC_CAST(qdisc.get()));
}

}  // namespace st::emu
