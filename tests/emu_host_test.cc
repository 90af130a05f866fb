// What an emulated run's manifest says about its host (emu/host_check.h):
// the CPU's busy, idle and stolen shares over the run, and whether the host
// fell behind. Pure: no privileges.
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

nlohmann::json link(uint64_t packets, uint64_t late) {
  return {{"packets", packets}, {"delay_late_packets", late}, {"delay_worst_late_ms", late > 0 ? 12.5 : 0.3}};
}

TEST(EmuHost, AHostThatKeptUpGivesNoReason) {
  const nlohmann::json use = {{"busy", 0.6}, {"idle", 0.39}, {"steal", 0.01}};
  // 1% late exactly is still kept up; netem links (no delay line fields) count nothing.
  const nlohmann::json links = {{"a->b", link(1000, 10)}, {"b->a", link(1000, 10)}, {"c->a", {{"packets", 5}}}};
  EXPECT_TRUE(host_fell_behind(use, links).empty());
  EXPECT_TRUE(host_fell_behind(nullptr, nlohmann::json::object()).empty());  // nothing was measured
}

TEST(EmuHost, StolenCpuAndLatePacketsAreEachAReason) {
  const nlohmann::json stolen = {{"busy", 0.3}, {"idle", 0.46}, {"steal", 0.24}};
  const nlohmann::json late = {{"a->b", link(1000, 30)}, {"b->a", link(1000, 0)}};  // 1.5% of 2000
  const auto both = host_fell_behind(stolen, late);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0], "the hypervisor took 24% of the host's CPU time");
  EXPECT_EQ(both[1], "the delay line released 1.5% of the WAN packets a millisecond or more late");
  EXPECT_EQ(host_fell_behind(stolen, nlohmann::json::object()).size(), 1u);
}

nlohmann::json pacing(uint64_t tasks, uint64_t late, double worst_ms) {
  return {{"tasks", tasks},
          {"late_tasks", late},
          {"late_share", static_cast<double>(late) / static_cast<double>(tasks)},
          {"worst_late_ms", worst_ms}};
}

TEST(EmuHost, PacingThatHeldOrWasNotUsedGivesNoReason) {
  const nlohmann::json quiet = {{"busy", 0.6}, {"idle", 0.4}, {"steal", 0.0}};
  // 1% late exactly still held; a rank that was not paced has null.
  const nlohmann::json held = nlohmann::json::array({pacing(1000, 10, 4.0), nullptr, pacing(500, 0, 0.0)});
  EXPECT_TRUE(host_fell_behind(quiet, nlohmann::json::object(), held).empty());
  EXPECT_TRUE(host_fell_behind(quiet, nlohmann::json::object(), nlohmann::json::array()).empty());
}

TEST(EmuHost, LatePacingIsOneReasonNamingEveryLateRank) {
  const nlohmann::json quiet = {{"busy", 0.6}, {"idle", 0.4}, {"steal", 0.0}};
  const nlohmann::json one_late = nlohmann::json::array({pacing(1000, 5, 2.0), pacing(1000, 32, 67.25)});
  const auto reasons = host_fell_behind(quiet, nlohmann::json::object(), one_late);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0],
            "paced compute ran late on rank 1: up to 3.2% of a node's tasks ended over 1 ms after their priced time "
            "(worst 67.2 ms; summary.pacing in each rank's manifest)");

  const nlohmann::json two_late = nlohmann::json::array({pacing(1000, 20, 9.0), nullptr, pacing(200, 4, 3.0)});
  const auto both = host_fell_behind(quiet, nlohmann::json::object(), two_late);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_NE(both[0].find("on ranks 0, 2: up to 2.0%"), std::string::npos) << both[0];
  EXPECT_NE(both[0].find("(worst 9.0 ms"), std::string::npos) << both[0];
}

}  // namespace
}  // namespace st::emu
