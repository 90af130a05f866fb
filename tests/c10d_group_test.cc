// GlooGroup on its own: ranks meeting over loopback, and connect() failing
// within its timeout, with a message naming the rank and the address, when
// the master is missing, unresolvable or alone, or the options are invalid.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "c10d_test_util.h"
#include "core/c10d/gloo_group.h"
#include "free_port.h"

namespace st::c10d_ddp {
namespace {

using ::testing::HasSubstr;
using test::loopback;
using test::run_ranks;
using st::test::free_port;

// Expects connect() to fail with a GlooGroupError mentioning every fragment,
// no later than `bound` after the start.
void expect_connect_fails(const GlooGroupOptions& options, const std::vector<std::string>& fragments,
                          std::chrono::milliseconds bound) {
  const auto start = std::chrono::steady_clock::now();
  try {
    GlooGroup::connect(options);
    ADD_FAILURE() << "connect() succeeded";
  } catch (const GlooGroupError& error) {
    for (const std::string& fragment : fragments) EXPECT_THAT(error.what(), HasSubstr(fragment));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, bound);
}

TEST(GlooGroup, NobodyListeningOnTheMasterPortFailsWithinTheTimeout) {
  const uint16_t port = free_port();
  const auto options = loopback(1, 2, port, 2500);
  expect_connect_fails(options, {"rank 1 of 2", "127.0.0.1:" + std::to_string(port), "2500 ms"},
                       std::chrono::milliseconds(2500 + 3000));
}

TEST(GlooGroup, UnresolvableMasterAddressFailsWithinTheTimeout) {
  auto options = loopback(1, 2, 29999, 1500);
  options.master_addr = "no-such-host.invalid";
  expect_connect_fails(options, {"rank 1 of 2", "no-such-host.invalid:29999", "cannot resolve"},
                       std::chrono::milliseconds(1500 + 5000));
}

TEST(GlooGroup, RankZeroWithoutPeersFailsWithinTheTimeout) {
  expect_connect_fails(loopback(0, 2, free_port(), 1000), {"rank 0 of 2", "only 1 of 2 ranks joined"},
                       std::chrono::milliseconds(1000 + 3000));
}

TEST(GlooGroup, RejectsInvalidOptions) {
  expect_connect_fails(loopback(2, 2, 29500), {"rank must be in [0, world_size)"}, std::chrono::milliseconds(1000));
  auto both_devices = loopback(0, 1, 29500);
  both_devices.device_interface = "lo";
  both_devices.device_hostname = "127.0.0.1";
  expect_connect_fails(both_devices, {"not both"}, std::chrono::milliseconds(1000));
}

TEST(GlooGroup, LoopbackMasterPutsTheGlooDeviceOnLoopback) {
  auto options = loopback(0, 1, 29500);
  EXPECT_EQ(default_device_address(options), "127.0.0.1");
  options.master_addr = "localhost";
  EXPECT_EQ(default_device_address(options), "127.0.0.1");
}

TEST(GlooGroup, TwoRanksMeetAndPassABarrier) {
  const auto errors = run_ranks(2, [](int r, uint16_t port) {
    auto options = loopback(r, 2, port);
    if (r == 1) options.device_interface = "lo";  // by interface name instead of the loopback default
    GlooGroup group = GlooGroup::connect(options);
    EXPECT_EQ(group.rank(), r);
    EXPECT_EQ(group.device_address(), r == 1 ? "lo" : "127.0.0.1");
    group.barrier();
  });
  EXPECT_EQ(errors, std::vector<std::string>(2, ""));
}
}  // namespace
}  // namespace st::c10d_ddp
