// Trace generators, transforms, GeneratorSpec, and the shipped and real traces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "traces/generators.h"
#include "traces/trace_io.h"

namespace st::traces {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path project_root() { return fs::path(__FILE__).parent_path().parent_path(); }

// Lag-1 autocorrelation of the step rates.
double lag1_correlation(const Trace& trace) {
  const auto& s = trace.steps();
  double mean = 0;
  for (const auto& step : s) mean += step.mbps / static_cast<double>(s.size());
  double covariance = 0, variance = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    variance += (s[i].mbps - mean) * (s[i].mbps - mean);
    if (i > 0) covariance += (s[i].mbps - mean) * (s[i - 1].mbps - mean);
  }
  return covariance / variance;
}

GeneratorSpec spec_of(std::string kind, std::map<std::string, double> parameters = {}, std::uint64_t seed = 1,
                      double duration_s = 60, double step_s = 1) {
  GeneratorSpec spec;
  spec.kind = std::move(kind);
  spec.parameters = std::move(parameters);
  spec.seed = seed;
  spec.duration_s = duration_s;
  spec.step_s = step_s;
  return spec;
}

std::string invalid_argument_of(const GeneratorSpec& spec) {
  try {
    generate(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Generators, ConstantStepSquareAndSineHaveTheirShape) {
  const Trace constant = constant_trace(42, 10.5, 1);
  EXPECT_DOUBLE_EQ(constant.duration_s(), 10.5);
  EXPECT_DOUBLE_EQ(constant.mean_mbps(), 42);

  const Trace steps = step_trace({{0, 100}, {10, 50}}, 60);
  EXPECT_DOUBLE_EQ(steps.duration_s(), 60);
  EXPECT_DOUBLE_EQ(steps.rate_at(9.9), 100);
  EXPECT_DOUBLE_EQ(steps.rate_at(59), 50);
  EXPECT_NEAR(steps.mean_mbps(), (10 * 100.0 + 50 * 50.0) / 60, 1e-9);
  EXPECT_THROW(step_trace({{5, 1}, {5, 2}}, 60), std::invalid_argument);
  EXPECT_THROW(step_trace({{0, 1}, {70, 2}}, 60), std::invalid_argument);

  const Trace square = square_trace(20, 200, 10, 60, 0.3);
  EXPECT_DOUBLE_EQ(square.rate_at(2.9), 200);
  EXPECT_DOUBLE_EQ(square.rate_at(3.1), 20);
  EXPECT_DOUBLE_EQ(square.rate_at(13.1), 20);
  EXPECT_NEAR(square.mean_mbps(), 0.3 * 200 + 0.7 * 20, 1e-9);
  EXPECT_DOUBLE_EQ(square.duration_s(), 60);

  const Trace sine = sine_trace(100, 50, 20, 200, 0.5);
  EXPECT_NEAR(sine.mean_mbps(), 100, 1e-6);
  EXPECT_NEAR(sine.max_mbps(), 150, 0.5);  // sampled mid-step
  EXPECT_NEAR(sine.min_mbps(), 50, 0.5);
  EXPECT_DOUBLE_EQ(sine_trace(10, 30, 20, 20).min_mbps(), 0);  // cut at 0
}

TEST(Generators, Ar1HasTheRequestedMeanSpreadAndCorrelation) {
  const Trace trace = ar1_trace({115, 30, 0.8}, 100000, 1, 42);
  EXPECT_EQ(trace.steps().size(), 100000u);
  EXPECT_NEAR(trace.mean_mbps(), 115, 2.0);  // ~4 standard errors
  EXPECT_NEAR(trace.stddev_mbps(), 30, 1.5);
  EXPECT_NEAR(lag1_correlation(trace), 0.8, 0.02);
  const Trace bounded = ar1_trace({115, 60, 0.5, 20, 300}, 5000, 1, 1);
  EXPECT_GE(bounded.min_mbps(), 20);
  EXPECT_LE(bounded.max_mbps(), 300);
  EXPECT_THROW(ar1_trace({115, 30, 1.0}, 10, 1, 1), std::invalid_argument);
  EXPECT_THROW(ar1_trace({115, 30, 0.5, 50, 40}, 10, 1, 1), std::invalid_argument);
}

TEST(Generators, MarkovVisitsItsLevelsAroundTheMean) {
  const Trace trace = markov_trace({100, 3, 0.5, 10, 0}, 200000, 1, 3);
  EXPECT_NEAR(trace.mean_mbps(), 100, 3);
  EXPECT_DOUBLE_EQ(trace.min_mbps(), 50);
  EXPECT_DOUBLE_EQ(trace.max_mbps(), 150);
  for (const auto& step : trace.steps()) ASSERT_TRUE(step.mbps == 50 || step.mbps == 100 || step.mbps == 150);
  // Mean dwell about hold_s: changes happen about every 10 steps.
  std::size_t changes = 0;
  for (std::size_t i = 1; i < trace.steps().size(); ++i) changes += trace.steps()[i].mbps != trace.steps()[i - 1].mbps;
  EXPECT_NEAR(static_cast<double>(changes) / 200000, 0.1, 0.01);
  const Trace noisy = markov_trace({100, 4, 0.2, 5, 10}, 50000, 1, 3);
  EXPECT_NEAR(noisy.mean_mbps(), 100, 3);
  EXPECT_GT(noisy.stddev_mbps(), 10);
}

TEST(Generators, SameSeedSameTraceOtherSeedOtherTrace) {
  auto rates = [](const Trace& t) {
    std::vector<double> r;
    for (const auto& s : t.steps()) r.push_back(s.mbps);
    return r;
  };
  EXPECT_EQ(rates(ar1_trace({100, 20, 0.9}, 500, 1, 5)), rates(ar1_trace({100, 20, 0.9}, 500, 1, 5)));
  EXPECT_NE(rates(ar1_trace({100, 20, 0.9}, 500, 1, 5)), rates(ar1_trace({100, 20, 0.9}, 500, 1, 6)));
  EXPECT_EQ(rates(markov_trace({100}, 500, 1, 5)), rates(markov_trace({100}, 500, 1, 5)));
  EXPECT_NE(rates(markov_trace({100}, 500, 1, 5)), rates(markov_trace({100}, 500, 1, 6)));
  GeneratorSpec spec = spec_of("ar1", {{"mean", 80}, {"spread", 10}, {"correlation", 0.5}}, 9, 300);
  EXPECT_EQ(rates(generate(spec)), rates(generate(spec)));
}

TEST(Transforms, OutagesZeroTheirWindowsOnly) {
  const Trace base = constant_trace(50, 30);
  const Trace cut = with_outages(base, {{5, 2.5}, {28, 10}});
  EXPECT_DOUBLE_EQ(cut.duration_s(), 30);
  EXPECT_DOUBLE_EQ(cut.rate_at(4.99), 50);
  EXPECT_DOUBLE_EQ(cut.rate_at(5), 0);
  EXPECT_DOUBLE_EQ(cut.rate_at(7.4), 0);
  EXPECT_DOUBLE_EQ(cut.rate_at(7.5), 50);
  EXPECT_DOUBLE_EQ(cut.rate_at(29.9), 0);
  EXPECT_NEAR(cut.mean_mbps(), 50 * (30 - 2.5 - 2) / 30, 1e-9);
  EXPECT_THROW(with_outages(base, {{30, 1}}), std::invalid_argument);
  EXPECT_THROW(with_outages(base, {{1, 0}}), std::invalid_argument);
}

TEST(Transforms, ScaleCropLoopClampRound) {
  const Trace base({{0, 10}, {1, 20}, {2, 30}}, "<base>");  // 3 s
  EXPECT_NEAR(scale_to_mean(base, 115).mean_mbps(), 115, 1e-9);
  EXPECT_THROW(scale_to_mean(constant_trace(0, 5), 115), std::invalid_argument);

  const Trace cropped = crop(base, 1.5, 5.5);  // 20 .5 s, 30, 10, 20, 30 .5 s
  EXPECT_DOUBLE_EQ(cropped.duration_s(), 4);
  EXPECT_DOUBLE_EQ(cropped.rate_at(0.1), 20);
  EXPECT_DOUBLE_EQ(cropped.rate_at(0.6), 30);
  EXPECT_DOUBLE_EQ(cropped.rate_at(1.6), 10);
  EXPECT_DOUBLE_EQ(cropped.rate_at(3.9), 30);
  EXPECT_THROW(crop(base, 2, 2), std::invalid_argument);

  const Trace looped = loop_to(base, 7.5);
  EXPECT_DOUBLE_EQ(looped.duration_s(), 7.5);
  for (double t = 0; t < 7.5; t += 0.25) EXPECT_DOUBLE_EQ(looped.rate_at(t), base.rate_at(t)) << t;
  EXPECT_DOUBLE_EQ(loop_to(base, 2).duration_s(), 2);

  const Trace clamped = clamp_rates(base, 15, 25);
  EXPECT_DOUBLE_EQ(clamped.min_mbps(), 15);
  EXPECT_DOUBLE_EQ(clamped.max_mbps(), 25);
  EXPECT_THROW(clamp_rates(base, 30, 20), std::invalid_argument);

  EXPECT_DOUBLE_EQ(round_rates(Trace({{0, 115.12345}}), 0.001).steps()[0].mbps, 115.123);
}

TEST(GeneratorSpec, ErrorsNameTheKindOrParameter) {
  EXPECT_THAT(invalid_argument_of(spec_of("wavy")), HasSubstr("unknown trace generator kind 'wavy'"));
  EXPECT_THAT(invalid_argument_of(spec_of("constant", {{"mbps", 5}, {"colour", 1}})), HasSubstr("unknown parameter 'colour'"));
  EXPECT_THAT(invalid_argument_of(spec_of("ar1", {{"mean", 5}, {"spread", 1}})), HasSubstr("needs parameter 'correlation'"));
  EXPECT_THAT(invalid_argument_of(spec_of("ar1", {{"mean", 5}, {"spread", 1}, {"correlation", 2}})), HasSubstr("correlation"));
  EXPECT_THAT(invalid_argument_of(spec_of("markov", {{"mean", 5}, {"states", 2.5}})), HasSubstr("states"));
  EXPECT_THAT(invalid_argument_of(spec_of("constant", {{"mbps", 5}}, 1, -3)), HasSubstr("duration"));
  EXPECT_THAT(invalid_argument_of(spec_of("constant", {{"mbps", 5}}, 1, 60, 0)), HasSubstr("step"));
  EXPECT_THAT(invalid_argument_of(spec_of("constant", {{"mbps", 5}}, 1, 1e9, 1e-3)), HasSubstr("more than"));
  GeneratorSpec points_elsewhere = spec_of("constant", {{"mbps", 5}});
  points_elsewhere.points = {{0, 1}};
  EXPECT_THAT(invalid_argument_of(points_elsewhere), HasSubstr("points"));
  EXPECT_THAT(invalid_argument_of(spec_of("step")), HasSubstr("point"));
}

TEST(GeneratorSpec, AppliesOutagesThenMeanThenRounding) {
  GeneratorSpec spec = spec_of("sine", {{"mean", 100}, {"amplitude", 30}, {"period", 17}}, 1, 120);
  spec.outages = {{10, 5}};
  spec.target_mean_mbps = 115;
  const Trace trace = generate(spec);
  EXPECT_NEAR(trace.mean_mbps(), 115, 0.0005);
  EXPECT_DOUBLE_EQ(trace.rate_at(12), 0);
  for (const auto& step : trace.steps()) EXPECT_NEAR(step.mbps * 1000, std::round(step.mbps * 1000), 1e-6);
  spec.kind = "step";
  spec.parameters.clear();
  spec.points = {{0, 10}, {60, 20}};
  EXPECT_DOUBLE_EQ(generate(spec).duration_s(), 120);
}

TEST(RealTraces, StarlinkScaledToA115MbpsMean) {
  const fs::path path = project_root().parent_path() / "shared/traces/real/starlink-autobahn-10min.csv";
  if (!fs::exists(path)) GTEST_SKIP() << path << " is not here";
  const Trace real = read_trace(path.string());
  EXPECT_EQ(real.steps().size(), 600u);
  EXPECT_DOUBLE_EQ(real.duration_s(), 600);
  EXPECT_NEAR(real.mean_mbps(), 201.3, 0.05);  // as the shared README says
  const Trace scaled = scale_to_mean(real, 115);
  EXPECT_NEAR(scaled.mean_mbps(), 115, 1e-9);
  EXPECT_DOUBLE_EQ(scaled.min_mbps(), 0);  // its outages stay outages
  EXPECT_NEAR(scaled.max_mbps() / real.max_mbps(), 115 / real.mean_mbps(), 1e-12);
}

// The shipped trace is what docs/traces.md's command generates.
TEST(ShippedTraces, Fluct115IsReproducibleFromItsCommand) {
  const fs::path path = project_root() / "traces/fluct-115mbps.csv";
  ASSERT_TRUE(fs::exists(path)) << path;
  const Trace shipped = read_trace_csv(path.string());
  EXPECT_NEAR(shipped.mean_mbps(), 115, 0.001);
  EXPECT_GE(shipped.duration_s(), 1800);
  EXPECT_GE(shipped.min_mbps(), 19);
  EXPECT_LE(shipped.max_mbps(), 300);
  EXPECT_GT(shipped.max_mbps(), 250);
  GeneratorSpec spec = spec_of(
      "ar1", {{"mean", 115}, {"spread", 60}, {"correlation", 0.7}, {"floor", 20}, {"ceiling", 300}}, 115, 1800);
  spec.target_mean_mbps = 115;
  const Trace regenerated = generate(spec);
  ASSERT_EQ(regenerated.steps().size(), shipped.steps().size());
  for (std::size_t i = 0; i < shipped.steps().size(); ++i) {
    ASSERT_EQ(regenerated.steps()[i].time_s, shipped.steps()[i].time_s) << i;
    ASSERT_EQ(regenerated.steps()[i].mbps, shipped.steps()[i].mbps) << i;
  }
}

}  // namespace
}  // namespace st::traces
