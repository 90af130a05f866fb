// core/control/bandwidth_estimator with after_previous_iteration: an
// iteration's transfer time starts no earlier than the end of its node's
// earlier iterations' exchanges, so time when one iteration's exchange waited
// behind another's bytes on the same stream counts once. Part of
// control_test (tests/CMakeLists.txt). Pure logic.
#include <gtest/gtest.h>

#include <vector>

#include "core/control/bandwidth_estimator.h"
#include "tests/bandwidth_estimator_test_util.h"

namespace st {
namespace {

// 1.25 MB: 100 ms at 100 Mbps.
constexpr double kBytes = 1250000;

// `node`'s iteration whose one exchange ran [start_ms, end_ms) on the run's
// clock (origin known) and received kBytes. The latency is 20 ms (the
// quickest exchange of the test utility's samples).
control::ExchangeSample posted(int node, int iteration, double start_ms, double end_ms) {
  auto s = exchange(end_ms - start_ms, kBytes);
  s.node = node;
  s.iteration = iteration;
  s.origin_ms = start_ms;
  s.intervals = {{0, end_ms - start_ms}};
  return s;
}

control::BandwidthEstimator estimator(bool after_previous, bool paired = false) {
  control::BandwidthEstimatorOptions o;
  o.after_previous_iteration = after_previous;
  o.pair_by_iteration = paired;
  return control::BandwidthEstimator(o, 2);
}

double measured(control::BandwidthEstimator& e, const std::vector<control::ExchangeSample>& samples) {
  for (const auto& s : samples) e.add(s);
  const auto estimate = e.update();
  EXPECT_TRUE(estimate.measured_mbps.has_value());
  return estimate.measured_mbps.value_or(0);
}

// On a 100 Mbps link each node's iteration 10 runs [0, 120): 20 ms of
// latency, then its bytes. Iteration 11 is posted at 60 ms, behind it on
// the same stream, and its bytes arrive in [120, 220). Timed alone, 11's
// exchange counts [80, 220): 140 ms for 100 ms of bytes, and R reads 83.3
// Mbps. After the previous iteration it counts [120, 220), and R reads the
// link. The same with the samples paired by iteration.
TEST(BandwidthEstimator, TimesAnIterationFromTheEndOfItsNodesPreviousOneWhenAsked) {
  for (const bool paired : {false, true}) {
    for (const bool after_previous : {false, true}) {
      auto e = estimator(after_previous, paired);
      const double r = measured(e, {posted(0, 10, 0, 120), posted(1, 10, 0, 120), posted(0, 11, 60, 220),
                                    posted(1, 11, 60, 220)});
      EXPECT_NEAR(r, after_previous ? 100 : 2 * kBytes * 8 / 240e3, 1e-9) << "paired " << paired;
    }
  }
}

// The end a node's earlier iterations reached carries over to the next
// tick, and one node's does not clip another's: rank 1's iteration 10,
// reported a tick after rank 0's, is timed whole.
TEST(BandwidthEstimator, KeepsEachNodesPreviousEndAcrossTicks) {
  for (const bool after_previous : {false, true}) {
    auto e = estimator(after_previous);
    EXPECT_NEAR(measured(e, {posted(0, 10, 0, 120)}), 100, 1e-9);
    const double r = measured(e, {posted(1, 10, 0, 120), posted(0, 11, 60, 220)});
    EXPECT_NEAR(r, after_previous ? 100 : 2 * kBytes * 8 / 240e3, 1e-9);
  }
}

// A sample that does not say where its intervals start on the run's clock
// (telemetry without the origin) is timed on its own, as without the option.
TEST(BandwidthEstimator, TimesASampleWithoutAnOriginOnItsOwn) {
  auto e = estimator(true);
  EXPECT_NEAR(measured(e, {posted(0, 10, 0, 120)}), 100, 1e-9);
  auto late = posted(0, 11, 60, 220);
  late.origin_ms = -1;
  EXPECT_NEAR(measured(e, {late}), kBytes * 8 / 140e3, 1e-9);
}

}  // namespace
}  // namespace st
