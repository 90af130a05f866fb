#include "emu/backend_info.h"

#include <netlink/netlink.h>
#include <netlink/route/link.h>

namespace st::emu {

std::string backend_info() {
  nl_sock* sock = nl_socket_alloc();
  if (sock == nullptr) return "libnl-route-3: cannot allocate a netlink socket";
  const int err = nl_connect(sock, NETLINK_ROUTE);
  std::string info = err == 0 ? "libnl-route-3: NETLINK_ROUTE socket opened"
                              : std::string("libnl-route-3: NETLINK_ROUTE unavailable: ") + nl_geterror(err);
  nl_socket_free(sock);
  return info;
}

}  // namespace st::emu
