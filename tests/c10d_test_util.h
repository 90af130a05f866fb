#pragma once
// Shared by the c10d tests: GlooGroup options for a rank on loopback, and
// ranks run as threads of the test process, each with its own GlooGroup.
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/c10d/gloo_group.h"
#include "free_port.h"

namespace st::c10d_ddp::test {

inline GlooGroupOptions loopback(int rank, int world_size, uint16_t port, int timeout_ms = 20000) {
  GlooGroupOptions options;
  options.rank = rank;
  options.world_size = world_size;
  options.master_port = port;
  options.timeout = std::chrono::milliseconds(timeout_ms);
  return options;
}

// Runs body(rank, port) on one thread per rank, each with its own
// GlooGroup; returns each rank's error message ("" when it succeeded).
inline std::vector<std::string> run_ranks(int world_size, const std::function<void(int rank, uint16_t port)>& body) {
  const uint16_t port = st::test::free_port();
  std::vector<std::string> errors(world_size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < world_size; ++r) {
    ranks.emplace_back([&, r] {
      try {
        body(r, port);
      } catch (const std::exception& error) {
        errors[r] = error.what();
      }
    });
  }
  for (std::thread& rank : ranks) rank.join();
  return errors;
}

}  // namespace st::c10d_ddp::test
