#pragma once
#include <string>

namespace st::emu {

// One line describing the emulation backend: whether a NETLINK_ROUTE socket
// can be opened here (it needs no privileges to open, only to change links).
std::string backend_info();

}  // namespace st::emu
