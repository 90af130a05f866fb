#pragma once
// A loopback TCP port for a test's TCPStore: a port found free (bound, then
// released for the store about to start: a small race, acceptable in a
// test) below the kernel's ephemeral range. Ranks may dial the store before
// it listens (they retry); a dial to an unused port inside the ephemeral
// range can be given that very port as its own source port and connect to
// itself (TCP simultaneous open), and other tests' outgoing connections
// take their ports from that range too. Below it, neither happens.
// tests/port_lib.sh does the same for the shell tests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>

namespace st::test {

// Binds `port` on loopback; returns it, or 0 when it is taken.
inline uint16_t bind_and_release(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return bound ? port : 0;
}

// `count` consecutive free ports; returns the first.
inline uint16_t free_port(int count = 1) {
  int ephemeral_low = 32768;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low;
  const int low = 10000, high = std::max(low + 1000, ephemeral_low) - count;
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<int> pick(low, high - 1);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const int first = pick(random);
    bool all_free = true;
    for (int i = 0; i < count && all_free; ++i) all_free = bind_and_release(static_cast<uint16_t>(first + i)) != 0;
    if (all_free) return static_cast<uint16_t>(first);
  }
  ADD_FAILURE() << "no free loopback port below " << ephemeral_low;
  return 0;
}

}  // namespace st::test
