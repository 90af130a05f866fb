// core/control: the plan's codec (and its errors), the traffic model and
// density choice, the GPU throughput model and batch split, and the
// controller's ticks and plans (the telemetry: telemetry_test.cc; the
// bandwidth estimator: bandwidth_estimator_test.cc). Pure logic: no
// transport, no LibTorch.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <tuple>

#include "core/compress/compressor.h"
#include "core/control/controller.h"
#include "core/control/controller_presets.h"
#include "core/telemetry/node_telemetry.h"
#include "tests/control_test_util.h"

namespace st {

namespace testing {

telemetry::NodeTelemetry sample_telemetry(int rank) {
  telemetry::NodeTelemetry t;
  t.rank = rank;
  t.iteration = 7;
  t.time_s = 1.5;
  t.forward_ms = 20;
  t.backward_ms = 14;
  t.gather_ms = 1;
  t.density = 0.05;
  t.batch = {64, 64};
  t.gpu_compute_ms = {34, 35};
  t.exchange_busy_ms = 30;
  t.exchange_shortest_ms = 20;
  t.exchange_bytes = 150000;
  t.window_sent = {0, 10};
  t.window_received = {0, 20};
  t.window_s = 1;
  return t;
}

}  // namespace testing

namespace {

using testing::sample_telemetry;

// bytes-bound sets the options docs/control-utilisation.md marks "yes" and
// keeps the paper's density rule; keep-busy adds the fill rule at 85%, the
// probe doubling, a probe every iteration and four early ticks. Neither
// touches the density bounds or the batch split; an unknown name lists the
// known ones.
TEST(ControllerPresets, KeepBusyIsBytesBoundFillingTheLink) {
  const control::ControllerOptions defaults;
  for (const char* name : {"bytes-bound", "keep-busy"}) {
    SCOPED_TRACE(name);
    control::ControllerOptions o;
    control::apply_controller_preset(o, name);
    EXPECT_NO_THROW(control::validate(o));
    EXPECT_TRUE(o.window_includes_load && o.probe_at_start && o.early_density_switch);
    EXPECT_TRUE(o.estimator.decrease_once && o.estimator.resume_at_delivered && o.estimator.pair_by_iteration);
    EXPECT_TRUE(o.estimator.fresh_overruns && o.estimator.after_previous_iteration);
    EXPECT_TRUE(o.estimator.drain_at_delivered);
    EXPECT_DOUBLE_EQ(o.estimator.probe_ceiling, 1.15);
    EXPECT_DOUBLE_EQ(o.interval_s, 0.5);
    EXPECT_DOUBLE_EQ(o.safety, 1.0);
    EXPECT_DOUBLE_EQ(o.estimator.wait_decrease, 0.5);
    EXPECT_DOUBLE_EQ(o.min_density, defaults.min_density);
    EXPECT_DOUBLE_EQ(o.max_density, defaults.max_density);
    EXPECT_EQ(o.adapt_batch, defaults.adapt_batch);
    const bool busy = std::string(name) == "keep-busy";
    EXPECT_DOUBLE_EQ(o.link_utilization, busy ? 0.85 : 0);
    EXPECT_DOUBLE_EQ(o.estimator.probe_growth, busy ? 2 : defaults.estimator.probe_growth);
    EXPECT_EQ(o.probe_every_iteration, busy);
    EXPECT_EQ(o.early_ticks, busy ? 4 : 1);
  }
  control::ControllerOptions o;
  try {
    control::apply_controller_preset(o, "fastest");
    FAIL() << "an unknown preset is an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "controller preset 'fastest' is not one of bytes-bound, keep-busy");
  }
}

TEST(Plan, RoundTripsAndRejectsBadValues) {
  control::Plan p{12, 0.07, {{60, 68}, {64, 64}}, "why"};
  const auto back = control::decode_plan(control::encode(p));
  EXPECT_EQ(back.effective_iteration, 12);
  EXPECT_DOUBLE_EQ(back.density, 0.07);
  EXPECT_EQ(back.batch, p.batch);
  p.density = 0;
  EXPECT_THROW(control::decode_plan(control::encode(p)), control::PlanError);
  p.density = 0.1;
  p.batch = {{0}};
  EXPECT_THROW(control::decode_plan(control::encode(p)), control::PlanError);
  // A drain travels only when there is one, so plans without keep their size.
  control::Plan plain{12, 0.07, {{64}}, "why"};
  control::Plan drained = plain;
  drained.drain_iterations = 4;
  drained.drain_density = 0.001;
  EXPECT_GT(control::encode(drained).size(), control::encode(plain).size());
  const auto with_drain = control::decode_plan(control::encode(drained));
  EXPECT_EQ(with_drain.drain_iterations, 4);
  EXPECT_DOUBLE_EQ(with_drain.drain_density, 0.001);
  EXPECT_EQ(control::decode_plan(control::encode(plain)).drain_iterations, 0);
  drained.drain_density = 0;
  EXPECT_THROW(control::decode_plan(control::encode(drained)), control::PlanError);
  // An early density likewise: absent, it is 0 (with the batches); it may
  // not come after the plan's effective iteration.
  control::Plan early = plain;
  early.density_from = 10;
  EXPECT_GT(control::encode(early).size(), control::encode(plain).size());
  EXPECT_EQ(control::decode_plan(control::encode(early)).density_from, 10);
  EXPECT_EQ(control::decode_plan(control::encode(plain)).density_from, 0);
  early.density_from = 13;
  EXPECT_THROW(control::decode_plan(control::encode(early)), control::PlanError);
}

TEST(TrafficModel, CountsWireBytes) {
  control::TrafficModel blocks{{1600, 10}, true, false, 2};
  // k = 80 -> 5 blocks: 16 + 5 x 4 + 80 x 4; the 10-entry bias: one block of 16 values.
  EXPECT_DOUBLE_EQ(blocks.bytes_per_iteration(0.05), (16 + 20 + 320) + (16 + 4 + 16 * 4));
  control::TrafficModel plain{{1600}, false, true, 3};  // u16 indices, f16 values, 2 other nodes
  EXPECT_DOUBLE_EQ(plain.bytes_per_iteration(0.05), 2 * (16 + 80 * 2 + 80 * 2));
  // A layer of at most dense_up_to elements is priced whole at any density,
  // as the wire encodes it (block16 with its count word, 40 values), with
  // any compressor.
  control::TrafficModel whole_bias{{1600, 40}, true, false, 2, 40};
  EXPECT_DOUBLE_EQ(whole_bias.bytes_per_iteration(0.05), (16 + 20 + 320) + (16 + 4 + 3 * 4 + 40 * 4));
  EXPECT_DOUBLE_EQ(whole_bias.bytes_per_iteration(0.001), (16 + 4 + 16 * 4) + (16 + 4 + 3 * 4 + 40 * 4));
  control::TrafficModel whole_topk{{1600, 40}, false, true, 2, 40};
  EXPECT_DOUBLE_EQ(whole_topk.bytes_per_iteration(0.05), (16 + 80 * 2 + 80 * 2) + (16 + 4 + 3 * 4 + 40 * 2));
}

TEST(TrafficModel, ChoosesTheLargestDensityThatFits) {
  control::TrafficModel m{{1000000}, false, false, 2};  // 8 bytes per element
  // 100 Mbps x 20 ms = 250 kB = 31,250 elements - 2 header bytes: density ~3.1%.
  const auto c = control::choose_density(m, 100, 20, 0.001, 0.5);
  EXPECT_LE(c.bytes, 250000);
  EXPECT_GT(m.bytes_per_iteration(c.density + 1e-5), 250000);
  EXPECT_NEAR(c.density, 0.03125, 1e-4);
  EXPECT_TRUE(control::choose_density(m, 1, 20, 0.001, 0.5).at_lower_bound);
  EXPECT_TRUE(control::choose_density(m, 1e5, 20, 0.001, 0.5).at_upper_bound);
  EXPECT_TRUE(control::choose_density(m, 100, -5, 0.001, 0.5).at_lower_bound);  // latency above compute
  EXPECT_THROW(control::choose_density(m, 100, 20, 0.5, 0.1), std::invalid_argument);
}

TEST(ThroughputModel, FitsSaturationFromTwoBatchSizes) {
  control::GpuThroughputModel gpu;
  gpu.add(64, 64);  // 1000 samples/s
  EXPECT_DOUBLE_EQ(gpu.alpha(), 0);
  EXPECT_NEAR(gpu.beta(), 1000, 1e-9);
  gpu.add(32, 64);  // the same time for half the batch: saturated above 64, flat below
  EXPECT_DOUBLE_EQ(gpu.alpha(), 64);
  EXPECT_NEAR(gpu.beta(), 1000, 1e-9);
  EXPECT_NEAR(gpu.predicted_ms(16), 64, 1e-9);
  EXPECT_NEAR(gpu.predicted_ms(128), 128, 1e-9);
}

TEST(ThroughputModel, EqualisesComputeTimeAcrossUnequalGpus) {
  std::vector<control::GpuThroughputModel> gpus(4);
  gpus[0].add(64, 40), gpus[1].add(64, 40);    // 1600 samples/s
  gpus[2].add(64, 100), gpus[3].add(64, 100);  // 2.5 x slower
  const auto b = control::allocate_batches(gpus, 256);
  EXPECT_EQ(std::accumulate(b.begin(), b.end(), 0), 256);
  std::vector<double> times;
  for (int g = 0; g < 4; ++g) times.push_back(gpus[g].predicted_ms(b[g]));
  const auto [lo, hi] = std::minmax_element(times.begin(), times.end());
  EXPECT_LE(*hi / *lo, 1.05);
  EXPECT_NEAR(b[0], 256 * 1600.0 / (2 * 1600 + 2 * 640), 1.0);
  EXPECT_THROW(control::allocate_batches({control::GpuThroughputModel{}}, 64), std::invalid_argument);
  EXPECT_THROW(control::allocate_batches(gpus, 3), std::invalid_argument);
}

control::Controller make_controller(double interval_s = 1.0, int raised_density_iterations = 0,
                                    bool window_includes_load = false) {
  control::ControllerOptions o;
  o.interval_s = interval_s;
  o.window_includes_load = window_includes_load;
  o.raised_density_iterations = raised_density_iterations;
  o.estimator.initial_mbps = 100;
  control::TrafficModel traffic{{400000, 20000}, true, false, 2};
  return control::Controller(o, traffic, {{64, 64}, {64, 64}}, 0.05, 1);
}

TEST(Controller, TicksOnTheClockAndAnnouncesAhead) {
  auto c = make_controller();
  for (int r = 0; r < 2; ++r) c.on_telemetry(sample_telemetry(r));
  EXPECT_FALSE(c.tick(0.2, 10));  // before the first tick (a quarter interval)
  const auto plan = c.tick(0.25, 10);
  ASSERT_EQ(c.records().size(), 1u);
  const auto& rec = c.records().back();
  EXPECT_NEAR(rec.compute_ms, 36, 1e-9);  // slowest GPU 35 + gather 1
  EXPECT_NEAR(rec.latency_ms, 20, 1e-9);
  // 150 kB in 10 ms net of latency: 120 Mbps measured.
  EXPECT_NEAR(*rec.measured_mbps, 120, 1e-9);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->effective_iteration, 10 + 1 + 2);  // staleness + 2 ahead
  // The chosen traffic fits 120 Mbps in 0.9 x (36 - 20) ms.
  control::TrafficModel traffic{{400000, 20000}, true, false, 2};
  EXPECT_LE(traffic.bytes_per_iteration(plan->density), 120e6 / 8 * 0.9 * 16e-3);
  EXPECT_GT(plan->density, 0.01);
  EXPECT_FALSE(c.tick(1.0, 20));  // the next tick is at 1.25 s
  EXPECT_EQ(plan->density_from, 0);  // the density switches with the batches
}

// With early_density_switch the plan still switches the batches staleness
// + 2 ahead, and lets the density start at rank 0's next iteration.
TEST(Controller, LetsTheDensityStartAtTheNextIterationWhenAsked) {
  control::ControllerOptions o;
  o.early_density_switch = true;
  o.estimator.initial_mbps = 100;
  control::Controller c(o, control::TrafficModel{{400000, 20000}, true, false, 2}, {{64, 64}, {64, 64}}, 0.05, 1);
  for (int r = 0; r < 2; ++r) c.on_telemetry(sample_telemetry(r));
  const auto plan = c.tick(0.25, 10);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->effective_iteration, 13);
  EXPECT_EQ(plan->density_from, 11);
}

// The exchange also overlaps the next iteration's parameter load: with
// window_includes_load the compute window counts it, and the plan may move
// more bytes; without, a reported load changes nothing.
TEST(Controller, CountsTheLoadInTheWindowWhenAsked) {
  control::TrafficModel traffic{{400000, 20000}, true, false, 2};
  std::vector<double> densities;
  for (bool counted : {false, true}) {
    auto c = make_controller(1.0, 0, counted);
    for (int r = 0; r < 2; ++r) {
      auto t = sample_telemetry(r);
      t.load_ms = r == 0 ? 10 : 24;  // the slower node sets the window
      c.on_telemetry(t);
    }
    const auto plan = c.tick(0.25, 10);
    ASSERT_TRUE(plan);
    const auto& rec = c.records().back();
    EXPECT_NEAR(rec.compute_ms, counted ? 60 : 36, 1e-9) << counted;  // 35 + gather 1 (+ load 24)
    EXPECT_LE(traffic.bytes_per_iteration(plan->density), 120e6 / 8 * 0.9 * (rec.compute_ms - 20) * 1e-3);
    densities.push_back(plan->density);
  }
  EXPECT_GT(densities[1], 2 * densities[0]);  // a budget of 40 ms against 16 ms
}

// early_ticks = 4: ticks at 0.25, 0.5, 0.75 and 1.0 s, then every second;
// each tick with fresh telemetry plans from what it measured.
TEST(Controller, EarlyTicksComeEveryQuarterInterval) {
  control::ControllerOptions o;
  o.early_ticks = 4;
  o.estimator.initial_mbps = 100;
  control::Controller c(o, control::TrafficModel{{400000, 20000}, true, false, 2}, {{64, 64}, {64, 64}}, 0.05, 1);
  std::vector<double> ticked_at;
  for (int step = 1; step <= 60; ++step) {  // every 50 ms to 3 s
    const double now = step / 20.0;
    for (int r = 0; r < 2; ++r) c.on_telemetry(sample_telemetry(r));
    const std::size_t before = c.records().size();
    c.tick(now, step);
    if (c.records().size() > before) ticked_at.push_back(now);
  }
  const std::vector<double> expected = {0.25, 0.5, 0.75, 1.0, 2.0, 3.0};
  ASSERT_EQ(ticked_at.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(ticked_at[i], expected[i], 1e-9) << "tick " << i;
  o.early_ticks = 0;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
}

TEST(Controller, RebalancesBatchesOnUnequalGpus) {
  auto c = make_controller();
  auto fast = sample_telemetry(0), slow = sample_telemetry(1);
  fast.gpu_compute_ms = {40, 40};
  slow.gpu_compute_ms = {100, 100};
  c.on_telemetry(fast);
  c.on_telemetry(slow);
  const auto plan = c.tick(0.25, 5);
  ASSERT_TRUE(plan);
  EXPECT_GT(plan->batch[0][0], plan->batch[1][0]);
  int total = 0;
  for (const auto& node : plan->batch) total += std::accumulate(node.begin(), node.end(), 0);
  EXPECT_EQ(total, 256);
  EXPECT_NE(plan->reason.find("batches rebalanced"), std::string::npos);
}

// The same fast GPU at the controller: the paper's rule has no time left
// (1.2 ms of compute less 20 ms of latency) and sits at min_density; with
// link_utilization 0.8 it chooses a transfer time X that keeps the link
// busy 80% of the iteration the round trip paces: X = 0.8 (C + L) / (2 - 0.8).
TEST(Controller, FillsTheLinkWhereTheRoundTripSetsThePace) {
  auto fast_gpu = [](int rank) {
    auto t = sample_telemetry(rank);
    t.backward_ms = 0.9;
    t.gpu_compute_ms = {1.2, 1.2};
    t.gather_ms = 0;
    t.wait_ms = 9.4;
    return t;
  };
  control::TrafficModel traffic{{400000, 20000}, true, false, 2};
  for (double u : {0.0, 0.8}) {
    control::ControllerOptions o;
    o.estimator.initial_mbps = 100;
    o.link_utilization = u;
    control::Controller c(o, traffic, {{64, 64}, {64, 64}}, 0.05, 1);
    for (int r = 0; r < 2; ++r) c.on_telemetry(fast_gpu(r));
    const auto plan = c.tick(0.25, 10);
    ASSERT_TRUE(plan) << u;
    const auto& rec = c.records().back();
    EXPECT_NEAR(rec.latency_ms, 20, 1e-9);
    if (u == 0) {
      EXPECT_LT(rec.budget_ms, 0);
      EXPECT_EQ(plan->density, o.min_density);
      EXPECT_NE(rec.reason.find("at min_density"), std::string::npos) << rec.reason;
    } else {
      EXPECT_NEAR(rec.budget_ms, 0.8 * (1.2 + 20) / 1.2, 1e-9);
      EXPECT_NE(rec.reason.find("filling the link to 80%"), std::string::npos) << rec.reason;
      // 150 kB per 10 ms measured: 120 Mbps; the density's bytes fit the budget.
      EXPECT_LE(traffic.bytes_per_iteration(plan->density), 120e6 / 8 * rec.budget_ms * 1e-3);
      EXPECT_GT(plan->density, 0.05);
    }
  }
  // The headline's pace (36 ms of compute, 20 ms one way): 80% of a 36 ms
  // iteration (28.8 ms) would stretch it to (36 + 20 + 28.8) / 2 = 42.4 ms,
  // so the round trip sets the pace there too: 0.8 x 56 / 1.2 ms. With
  // 150 ms of compute the compute keeps the pace: 0.8 x 150 ms.
  for (auto [compute_ms, budget_ms] : {std::pair{36.0, 0.8 * 56 / 1.2}, std::pair{150.0, 120.0}}) {
    control::ControllerOptions o;
    o.link_utilization = 0.8;
    control::Controller c(o, traffic, {{64, 64}, {64, 64}}, 0.05, 1);
    for (int r = 0; r < 2; ++r) {
      auto t = sample_telemetry(r);
      t.gpu_compute_ms = {compute_ms - 1, compute_ms - 1};  // plus the gather's 1 ms
      c.on_telemetry(t);
    }
    ASSERT_TRUE(c.tick(0.25, 10));
    EXPECT_NEAR(c.records().back().budget_ms, budget_ms, 1e-9) << compute_ms;
  }
  control::ControllerOptions o;
  o.link_utilization = 1;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
}

// A density warm-up runs its first iterations above the plan: the wait
// those iterations see is the warm-up's, so the estimate must not fall for
// it; the same wait after the warm-up is an overrun.
TEST(Controller, TheWarmUpsWaitIsNoOverrun) {
  auto waiting = [](int rank, int iteration) {
    auto t = sample_telemetry(rank);
    t.iteration = iteration;
    t.wait_ms = 40;  // f = 40 / (40 + 1.5 x 14) = 0.66: an overrun
    return t;
  };
  for (int raised : {0, 50}) {
    auto c = make_controller(1.0, raised);
    for (int r = 0; r < 2; ++r) c.on_telemetry(waiting(r, 20));
    c.tick(0.25, 20);
    const auto& during = c.records().back();
    if (raised == 0) {
      EXPECT_NE(during.reason.find("overrun"), std::string::npos) << during.reason;
      EXPECT_LT(during.estimated_mbps, 100);
      continue;
    }
    EXPECT_EQ(during.reason.find("overrun"), std::string::npos) << during.reason;
    EXPECT_NEAR(during.estimated_mbps, 120, 1e-9);  // the measured rate: 150 kB in 10 ms
    for (int r = 0; r < 2; ++r) c.on_telemetry(waiting(r, 50));
    c.tick(1.25, 50);
    EXPECT_NE(c.records().back().reason.find("overrun"), std::string::npos) << c.records().back().reason;
  }
  control::ControllerOptions o;
  o.raised_density_iterations = -1;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
}

// samples_by_plan: the controller hands the estimator each report's density
// and its own. Iterations that ran at 20% while its plan is 5% waited: an
// overrun without the option, a wait already answered with it.
TEST(Controller, JudgesEachWaitByTheDensityItsIterationRanAtWhenAsked) {
  for (const bool by_plan : {false, true}) {
    control::ControllerOptions o;
    o.estimator.initial_mbps = 100;
    o.estimator.samples_by_plan = by_plan;
    control::Controller c(o, control::TrafficModel{{400000, 20000}, true, false, 2}, {{64, 64}, {64, 64}}, 0.05, 1);
    for (int r = 0; r < 2; ++r) {
      auto t = sample_telemetry(r);
      t.iteration = 20;
      t.density = 0.2;
      t.wait_ms = 40;
      c.on_telemetry(t);
    }
    c.tick(0.25, 20);
    const auto& reason = c.records().back().reason;
    EXPECT_EQ(reason.rfind(by_plan ? "only iterations above the newest plan's density reported, and they waited; hold"
                                   : "overrun",
                           0),
              0u)
        << reason;
  }
}

// after_previous_iteration: the controller hands the estimator where each
// report's exchanges started on the run's clock. Each node's iteration 21
// was posted 60 ms into iteration 20's exchange and waited behind it: 83.3
// Mbps measured without the option, the link's 100 with it.
TEST(Controller, TimesEachIterationAfterItsNodesPreviousOneWhenAsked) {
  for (const bool after_previous : {false, true}) {
    control::ControllerOptions o;
    o.estimator.after_previous_iteration = after_previous;
    control::Controller c(o, control::TrafficModel{{400000, 20000}, true, false, 2}, {{64, 64}, {64, 64}}, 0.05, 1);
    for (const auto& [iteration, start_ms, end_ms] : {std::tuple{20, 0.0, 120.0}, std::tuple{21, 60.0, 220.0}})
      for (int r = 0; r < 2; ++r) {
        auto t = sample_telemetry(r);
        t.iteration = iteration;
        t.exchange_bytes = 1250000;
        t.exchange_busy_ms = end_ms - start_ms;
        t.exchange_intervals_ms = {0, end_ms - start_ms};
        if (after_previous) t.exchange_origin_ms = start_ms;
        c.on_telemetry(t);
      }
    c.tick(0.25, 21);
    ASSERT_TRUE(c.records().back().measured_mbps.has_value());
    EXPECT_NEAR(*c.records().back().measured_mbps, after_previous ? 100 : 2500000 * 8 / 240e3, 1e-9);
  }
}

// Every drain_every_ticks-th tick announces a plan, even where nothing else
// changed, whose first drain_iterations iterations run at min_density.
TEST(Controller, DrainsEveryFewTicks) {
  control::ControllerOptions o;
  o.estimator.initial_mbps = 100;
  o.drain_every_ticks = 3;
  o.drain_iterations = 5;
  control::Controller c(o, control::TrafficModel{{400000, 20000}, true, false, 2}, {{64, 64}, {64, 64}}, 0.05, 1);
  std::vector<int> drained_at;
  for (int tick = 0; tick < 9; ++tick) {
    for (int r = 0; r < 2; ++r) c.on_telemetry(sample_telemetry(r));
    const auto plan = c.tick(0.25 + tick, 10 * tick);
    if (plan && plan->drain_iterations > 0) {
      drained_at.push_back(tick);
      EXPECT_EQ(plan->drain_iterations, 5);
      EXPECT_DOUBLE_EQ(plan->drain_density, o.min_density);
      EXPECT_EQ(plan->effective_iteration, 10 * tick + 1 + 2);
      EXPECT_NE(c.records().back().reason.find("drain: 5 iterations at density 0.0010 first"), std::string::npos)
          << c.records().back().reason;
    }
  }
  EXPECT_EQ(drained_at, (std::vector<int>{2, 5, 8}));
  o.drain_iterations = 0;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
  o.drain_iterations = 1;
  o.drain_every_ticks = -1;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
}

TEST(Controller, RejectsBadOptionsAndForeignTelemetry) {
  control::ControllerOptions o;
  o.max_density = 0.0001;
  EXPECT_THROW(control::validate(o), std::invalid_argument);
  auto c = make_controller();
  EXPECT_THROW(c.on_telemetry(sample_telemetry(5)), telemetry::TelemetryError);
}

// The controller changes k between iterations: compressors take any k up to
// the state's max_k and keep their residual; the exact ones (topk,
// thresholdv16) return k at once, thresholdv (a threshold carried between
// calls) re-estimates its threshold when k changes and lands near k.
TEST(Compressors, AcceptAChangingK) {
  for (const char* name : {"ef:thresholdv16", "ef:topk", "ef:thresholdv"}) {
    auto c = compress::make_compressor(name);
    const std::size_t n = 4096;
    auto state = c->make_state(n, 2048, "w");
    std::vector<float> grad(n);
    for (std::size_t i = 0; i < n; ++i) grad[i] = std::sin(0.37 * static_cast<double>(i)) * (1 + i % 7);
    std::vector<uint32_t> idx(c->max_output(n, 2048));
    std::vector<float> val(idx.size());
    for (std::size_t k : {41u, 2048u, 4u, 400u}) {
      const std::size_t count = c->compress(grad, k, *state, compress::SparseBuffers{idx.data(), val.data(), idx.size()});
      if (std::string(name) == "ef:thresholdv") {
        EXPECT_GE(count, k / 2) << name << " k " << k;
        EXPECT_LE(count, 2 * k) << name << " k " << k;
      } else {
        EXPECT_GE(count, std::min<std::size_t>(k, n)) << name << " k " << k;
      }
      EXPECT_LE(count, c->max_output(n, k)) << name << " k " << k;
      for (std::size_t j = 1; j < count; ++j) ASSERT_LT(idx[j - 1], idx[j]);
    }
    EXPECT_THROW(c->compress(grad, 2049, *state, compress::SparseBuffers{idx.data(), val.data(), idx.size()}),
                 std::invalid_argument);
  }
}

}  // namespace
}  // namespace st
