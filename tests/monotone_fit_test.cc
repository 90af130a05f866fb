// The monotone fit behind summary.json's second TTA reading
// (apps/monotone_fit.h): pooled violators, and a crossing that one lucky
// evaluation no longer decides.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "apps/monotone_fit.h"
#include "apps/run_summary.h"

namespace st::apps {
namespace {

void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "at " << i;
}

TEST(MonotoneFit, RisingValuesAreTheirOwnFit) {
  expect_values(isotonic_fit({0.1, 0.2, 0.2, 0.5}), {0.1, 0.2, 0.2, 0.5});
  EXPECT_TRUE(isotonic_fit({}).empty());
}

TEST(MonotoneFit, PoolsEveryViolatorWithTheValuesBeforeIt) {
  // 0.9 then 0.7 pool to 0.8; 0.8 then 0.6 pools with them to 0.75.
  expect_values(isotonic_fit({0.5, 0.9, 0.7, 0.8, 0.6, 1.0}), {0.5, 0.75, 0.75, 0.75, 0.75, 1.0});
  // A falling run pools into one block: its mean.
  expect_values(isotonic_fit({3, 2, 1}), {2, 2, 2});
}

TEST(MonotoneFit, OneLuckyEvaluationNoLongerDecidesTheCrossing) {
  // The second evaluation jumps past 0.85, the next two fall back: the
  // first crossing is index 1, the fit (0.86, 0.83, 0.82 pool to 0.8367)
  // reaches 0.85 only at index 4. tests/test_monotone_tta.py asserts the
  // same of analysis/monotone_tta.py, and the tie below likewise.
  const std::vector<double> accuracies = {0.80, 0.86, 0.83, 0.82, 0.86, 0.87};
  EXPECT_EQ(first_reaching(accuracies, 0.85), 1u);
  EXPECT_EQ(fit_reaching(accuracies, 0.85), 4u);
  // A steady rise reads the same both ways.
  EXPECT_EQ(fit_reaching({0.7, 0.8, 0.86, 0.9}, 0.85), 2u);
  // Pooled below the target to the end: the fit never reaches it.
  EXPECT_FALSE(fit_reaching({0.80, 0.86, 0.80}, 0.85));
  EXPECT_FALSE(first_reaching({0.1}, 0.85));
  // A tie: 0.9 and 0.8 pool to (0.9 + 0.8) / 2, which rounds to just over
  // 0.85 in doubles, so the fit reaches 0.85 at index 1.
  EXPECT_EQ(fit_reaching({0.8, 0.9, 0.8, 0.85}, 0.85), 1u);
}

TEST(MonotoneFit, ReadOutcomeGivesBothReadingsAndTheEvaluationsAfterTheFit) {
  const std::string dir = ::testing::TempDir() + "/monotone_fit_outcome";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/manifest.json") << R"({"summary": {"duration_s": 6.0, "mean_iteration_ms": 10}})";
  std::ofstream eval(dir + "/eval.csv");
  eval << "time_s,iteration,accuracy,loss,samples\n";
  const std::vector<double> accuracies = {0.80, 0.86, 0.83, 0.82, 0.86, 0.87};
  for (std::size_t i = 0; i < accuracies.size(); ++i) eval << i + 1 << "," << 5 * (i + 1) << "," << accuracies[i] << ",0.5,2000\n";
  eval.close();
  const RunOutcome o = read_outcome(dir, "run", 1, 0.85);
  EXPECT_EQ(o.tta_iteration, 10);
  EXPECT_EQ(o.tta_s, 2.0);
  EXPECT_EQ(o.tta_fit_iteration, 25);
  EXPECT_EQ(o.tta_fit_s, 5.0);
  EXPECT_EQ(o.evaluations_after_fit, 1);
}

}  // namespace
}  // namespace st::apps
