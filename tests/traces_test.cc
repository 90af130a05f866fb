// The trace library: model, CSV and Mahimahi formats, generators, transforms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "traces/generators.h"
#include "traces/trace.h"
#include "traces/trace_io.h"

namespace st::traces {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

fs::path write_temp(const std::string& name, const std::string& content) {
  // The process id keeps parallel runs (ctest -j, other checkouts) apart.
  const fs::path path = fs::path(::testing::TempDir()) / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

Trace parse_csv(const std::string& text) {
  std::istringstream in(text);
  return parse_trace_csv(in, "test.csv");
}

Trace make_trace(std::vector<std::pair<double, double>> rows) {
  std::vector<TraceStep> steps;
  for (auto [t, mbps] : rows) steps.push_back(TraceStep{t, mbps});
  return Trace(steps, "<test>");
}

// --- the model ---------------------------------------------------------

TEST(Trace, LastStepLastsAsLongAsTheIntervalBeforeIt) {
  EXPECT_DOUBLE_EQ(make_trace({{0, 1}, {1, 2}, {2, 3}}).duration_s(), 3);
  EXPECT_DOUBLE_EQ(make_trace({{0, 1}, {5, 2}}).duration_s(), 10);
  EXPECT_DOUBLE_EQ(make_trace({{0, 7}}).duration_s(), 1);
  EXPECT_DOUBLE_EQ(make_trace({{2, 1}, {3, 2}}).start_s(), 2);
}

TEST(Trace, StepAtFindsTheStepInForceAndLoops) {
  const Trace trace = make_trace({{0, 10}, {1, 20}, {3, 30}});  // lasts 5 s
  EXPECT_EQ(trace.rate_at(0), 10);
  EXPECT_EQ(trace.rate_at(0.999), 10);
  EXPECT_EQ(trace.rate_at(1), 20);
  EXPECT_EQ(trace.rate_at(2.5), 20);
  EXPECT_EQ(trace.rate_at(4.9), 30);
  EXPECT_EQ(trace.rate_at(5), 10);  // looped
  EXPECT_EQ(trace.rate_at(6.5), 20);
  EXPECT_EQ(trace.rate_at(5000 + 3.5), 30);
  EXPECT_EQ(trace.rate_at(-1), 10);
  EXPECT_EQ(trace.rate_at(std::nan("")), 10);
  EXPECT_EQ(trace.rate_at(INFINITY), 10);
}

TEST(Trace, BeforeALateStartTheFirstStepHolds) {
  const Trace trace = make_trace({{2, 10}, {3, 20}});  // lasts until 4 s
  EXPECT_EQ(trace.rate_at(0.5), 10);
  EXPECT_EQ(trace.rate_at(3.5), 20);
  EXPECT_EQ(trace.rate_at(4.5), 10);  // loops with period 4: 0.5
}

TEST(Trace, StatisticsAreTimeWeighted) {
  const Trace trace = make_trace({{0, 10}, {3, 40}, {4, 0}});  // 10 for 3 s, 40 for 1 s, 0 for 1 s
  EXPECT_DOUBLE_EQ(trace.mean_mbps(), (30.0 + 40.0) / 5);
  EXPECT_DOUBLE_EQ(trace.min_mbps(), 0);
  EXPECT_DOUBLE_EQ(trace.max_mbps(), 40);
  const double mean = 14;
  const double variance = (3 * (10 - mean) * (10 - mean) + (40 - mean) * (40 - mean) + mean * mean) / 5;
  EXPECT_NEAR(trace.stddev_mbps(), std::sqrt(variance), 1e-12);
}

TEST(Trace, InvalidStepsAreRejectedWithTheSource) {
  EXPECT_THROW(Trace({}, "x"), TraceError);
  try {
    Trace({{0, 1}, {0, 2}}, "mine");
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("mine"));
    EXPECT_THAT(e.what(), HasSubstr("step 2"));
  }
  EXPECT_THROW(Trace({{0, -1}}), TraceError);
  EXPECT_THROW(Trace({{0, NAN}}), TraceError);
  EXPECT_THROW(Trace({{-1, 1}}), TraceError);
  EXPECT_THROW(Trace({{0, 1, -1, 1.0}}), TraceError);
}

TEST(Trace, EndingAtSplitsTheLastStepWhenNeeded) {
  const Trace kept = trace_ending_at({{0, 1}, {1, 2}}, 2.0);
  EXPECT_EQ(kept.steps().size(), 2u);
  const Trace split = trace_ending_at({{0, 1}, {1, 2}}, 10.0);
  EXPECT_DOUBLE_EQ(split.duration_s(), 10);
  EXPECT_EQ(split.rate_at(9.9), 2);
  EXPECT_DOUBLE_EQ(trace_ending_at({{0, 5}}, 0.25).duration_s(), 0.25);
  EXPECT_THROW(trace_ending_at({{0, 1}, {1, 2}}, 1.0), TraceError);
}

// --- CSV ----------------------------------------------------------------

TEST(TraceCsv, ReadsCommentsHeaderAndRows) {
  const Trace trace = parse_csv("# a comment\ntime_s,mbps\n0,11.958\n1,14.918\n\n  # indented comment\n2, 16.46\n");
  ASSERT_EQ(trace.steps().size(), 3u);
  EXPECT_DOUBLE_EQ(trace.steps()[2].mbps, 16.46);
  EXPECT_DOUBLE_EQ(trace.duration_s(), 3);
  EXPECT_LT(trace.steps()[0].delay_ms, 0);
  EXPECT_EQ(trace.source(), "test.csv");
}

TEST(TraceCsv, ReadsWithoutHeaderWithCrlfAndOptionalColumns) {
  const Trace plain = parse_csv("0,5\r\n1,6\r\n");
  EXPECT_DOUBLE_EQ(plain.rate_at(1.5), 6);
  const Trace full = parse_csv("0,5,20,0.01\n1,6,30,0\n");
  EXPECT_DOUBLE_EQ(full.steps()[0].delay_ms, 20);
  EXPECT_DOUBLE_EQ(full.steps()[0].loss, 0.01);
  const Trace reordered = parse_csv("mbps,loss,time_s\n5,0.5,0\n7,,2\n");
  EXPECT_DOUBLE_EQ(reordered.steps()[1].time_s, 2);
  EXPECT_DOUBLE_EQ(reordered.steps()[1].mbps, 7);
  EXPECT_DOUBLE_EQ(reordered.steps()[0].loss, 0.5);
  EXPECT_DOUBLE_EQ(reordered.steps()[1].loss, 0);
}

// Each bad input, the line the error must name, and a word of its message.
struct BadCsv {
  const char* text;
  std::size_t line;
  const char* says;
};

TEST(TraceCsv, EveryErrorNamesTheFileAndLine) {
  const std::vector<BadCsv> cases = {
      {"# only a comment\ntime_s,mbps\n", 0, "no data rows"},
      {"", 0, "no data rows"},
      {"time_s,mbps\n0,1\n1,abc\n", 3, "not a number"},
      {"time_s,mbps\n0,1\nx,2\n", 3, "not a number"},
      {"0,1\n1,2\n2,3,4\n", 3, "expected 2 columns"},
      {"time_s,mbps\n0,1\n1\n", 3, "expected 2 columns"},
      {"0\n", 1, "expected 2 to 4 columns"},
      {"0,1,2,0,5\n", 1, "expected 2 to 4 columns"},
      {"# c\n-1,5\n", 2, "must be finite and >= 0"},
      {"0,5\n2,5\n2,6\n", 3, "not after the previous"},
      {"0,5\n2,5\n1,6\n", 3, "not after the previous"},
      {"0,5\n1,-3\n", 2, "rate -3"},
      {"0,5\n1,nan\n", 2, "must be finite"},
      {"0,5\n1,inf\n", 2, "must be finite"},
      {"0,5\n1,2e9\n", 2, "at most"},
      {"0,5\n\x01\x02,3\n", 2, "time_s '?" "?' is not a number"},
      {"nan,5\n", 1, "must be finite"},
      {"0,5,10,1\n", 1, "loss 1"},
      {"0,5,10,-0.1\n", 1, "loss -0.1"},
      {"0,5,-10\n", 1, "delay -10"},
      {"time_s,mbps,bandwidth\n0,1,2\n", 1, "unknown column 'bandwidth'"},
      {"time_s,time_s\n", 1, "appears twice"},
      {"# c\ntime_s,delay_ms\n0,1\n", 2, "no 'mbps' column"},
      {"0,1\n1,2\ntime_s,mbps\n", 3, "not a number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_csv(c.text);
      ADD_FAILURE() << "accepted";
    } catch (const TraceError& e) {
      EXPECT_EQ(e.line(), c.line);
      EXPECT_EQ(e.source(), "test.csv");
      EXPECT_THAT(e.what(), HasSubstr(c.says));
      const std::string where = c.line > 0 ? "test.csv:" + std::to_string(c.line) + ":" : "test.csv: ";
      EXPECT_THAT(e.what(), HasSubstr(where));
    }
  }
}

TEST(TraceCsv, FilesThatCannotBeReadSayWhy) {
  const std::string missing = (fs::path(::testing::TempDir()) / "no-such-trace.csv").string();
  try {
    read_trace_csv(missing);
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr(missing));
    EXPECT_THAT(e.what(), HasSubstr("cannot open"));
  }
  EXPECT_THROW(read_trace_csv(::testing::TempDir()), TraceError);
  const fs::path bad = write_temp("bad-line.csv", "# c\ntime_s,mbps\n0,1\n1,oops\n");
  try {
    read_trace_csv(bad.string());
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad.string() + ":4:"));
  }
}

TEST(TraceCsv, WriteThenReadGivesTheSameTrace) {
  const Trace original({{0, 1.0 / 3}, {0.5, 115.123, 20, 0.01}, {1.25, 0, -1, 0}}, "<test>");
  std::ostringstream out;
  write_trace_csv(original, out, "first line\nsecond line");
  EXPECT_THAT(out.str(), HasSubstr("# first line\n# second line\ntime_s,mbps,delay_ms,loss\n"));
  const Trace back = parse_csv(out.str());
  ASSERT_EQ(back.steps().size(), original.steps().size());
  for (std::size_t i = 0; i < back.steps().size(); ++i) {
    EXPECT_EQ(back.steps()[i].time_s, original.steps()[i].time_s);
    EXPECT_EQ(back.steps()[i].mbps, original.steps()[i].mbps);
    EXPECT_EQ(back.steps()[i].delay_ms < 0, original.steps()[i].delay_ms < 0);
    EXPECT_EQ(back.steps()[i].loss, original.steps()[i].loss);
  }
  std::ostringstream plain;
  write_trace_csv(make_trace({{0, 1}, {1, 2}}), plain);
  EXPECT_EQ(plain.str(), "time_s,mbps\n0,1\n1,2\n");
}

}  // namespace
}  // namespace st::traces
