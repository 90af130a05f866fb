// What an emulated run's manifest says about its host (emu/host_check.h):
// the CPU's busy, idle and stolen shares over the run. Pure: no privileges.
#include <gtest/gtest.h>

#include "emu/host_check.h"

namespace st::emu {
namespace {

TEST(EmuHost, CpuUseIsTheShareOfEachKindOfTimeBetweenTwoReadings) {
  const CpuTimes start{1000, 500, 10};
  const CpuTimes end{1600, 800, 110};  // 600 busy, 300 idle, 100 stolen
  const nlohmann::json use = cpu_use_between(start, end);
  EXPECT_DOUBLE_EQ(use.at("busy").get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(use.at("idle").get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(use.at("steal").get<double>(), 0.1);
}

TEST(EmuHost, CpuUseIsNullWhenNothingWasReadOrTheCountersWentBack) {
  EXPECT_TRUE(cpu_use_between(CpuTimes{}, CpuTimes{}).is_null());  // /proc/stat unreadable twice
  EXPECT_TRUE(cpu_use_between(CpuTimes{100, 100, 0}, CpuTimes{}).is_null());
}

TEST(EmuHost, ThisHostsCpuTimesGrow) {
  const CpuTimes first = cpu_times();
  ASSERT_GT(first.busy + first.idle, 0u) << "/proc/stat's cpu line was not read";
  volatile double spin = 0;
  for (int i = 0; i < 20'000'000; ++i) spin = spin + i;  // a few tens of milliseconds of work
  const nlohmann::json use = cpu_use_between(first, cpu_times());
  ASSERT_FALSE(use.is_null());
  EXPECT_NEAR(use["busy"].get<double>() + use["idle"].get<double>() + use["steal"].get<double>(), 1.0, 1e-9);
  EXPECT_GT(use["busy"].get<double>(), 0.0);
}

}  // namespace
}  // namespace st::emu
