// Mahimahi packet-delivery traces and the format guess.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "traces/generators.h"
#include "traces/trace_io.h"

namespace st::traces {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

Trace parse_mm(const std::string& text, double bin_s = 1.0) {
  std::istringstream in(text);
  return parse_mahimahi(in, "test.mm", bin_s);
}

std::string repeated_timestamps(int from_ms, int to_ms, int per_ms) {
  std::string text;
  for (int t = from_ms; t <= to_ms; ++t)
    for (int k = 0; k < per_ms; ++k) text += std::to_string(t) + "\n";
  return text;
}

fs::path write_temp(const std::string& name, const std::string& content) {
  // The process id keeps parallel runs (ctest -j, other checkouts) apart.
  const fs::path path = fs::path(::testing::TempDir()) / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

// One packet (12,000 bits) per bin, in Mbps.
double one_packet_mbps(double bin_s) { return kMahimahiPacketBits / bin_s / 1e6; }

TEST(Mahimahi, OnePacketPerMillisecondIsTwelveMbps) {
  const Trace single = parse_mm("1\n");
  EXPECT_DOUBLE_EQ(single.duration_s(), 0.001);
  EXPECT_DOUBLE_EQ(single.mean_mbps(), 12);
  const Trace two_seconds = parse_mm(repeated_timestamps(1, 2000, 2));  // 2 per ms
  ASSERT_EQ(two_seconds.steps().size(), 2u);
  EXPECT_DOUBLE_EQ(two_seconds.duration_s(), 2);
  EXPECT_DOUBLE_EQ(two_seconds.steps()[0].mbps, 24);
  EXPECT_DOUBLE_EQ(two_seconds.steps()[1].mbps, 24);
}

TEST(Mahimahi, BinsSplitThePeriodEvenly) {
  // 1 s at 12 Mbps, 1 s silent, then one packet at 3000 ms (the period).
  const Trace trace = parse_mm(repeated_timestamps(1, 1000, 1) + "3000\n", 0.5);
  ASSERT_EQ(trace.steps().size(), 6u);
  EXPECT_DOUBLE_EQ(trace.rate_at(0.2), 12);
  EXPECT_DOUBLE_EQ(trace.rate_at(0.7), 12);
  EXPECT_DOUBLE_EQ(trace.rate_at(1.2), 0);
  EXPECT_DOUBLE_EQ(trace.rate_at(2.7), one_packet_mbps(0.5));
  EXPECT_THROW(parse_mm("1\n", 0), std::invalid_argument);
  EXPECT_THROW(parse_mm("1\n", NAN), std::invalid_argument);
}

TEST(Mahimahi, BadFilesNameTheLine) {
  const std::vector<std::tuple<std::string, std::size_t, std::string>> cases = {
      {"", 0, "no timestamps"},
      {"\n\n", 0, "no timestamps"},
      {"1\n2\nthree\n", 3, "not a millisecond timestamp"},
      {"1\n-5\n", 2, "not a millisecond timestamp"},
      {"1\n2.5\n", 2, "not a millisecond timestamp"},
      {"5\n7\n6\n", 3, "before the previous one"},
      {"0\n0\n", 2, "loop period"},
      {"99999999999999999999999\n", 1, "not a millisecond timestamp"},
      {"999999999999999\n", 1, "beyond ten years"},
  };
  for (const auto& [text, line, says] : cases) {
    SCOPED_TRACE(text);
    try {
      parse_mm(text);
      ADD_FAILURE() << "accepted";
    } catch (const TraceError& e) {
      EXPECT_EQ(e.line(), line);
      EXPECT_THAT(e.what(), HasSubstr(says));
      if (line > 0) {
        EXPECT_THAT(e.what(), HasSubstr("test.mm:" + std::to_string(line) + ":"));
      }
    }
  }
}

// Writes, reads back with the step length as bin, and checks every step.
void expect_round_trip(const Trace& original, double bin_s) {
  std::ostringstream out;
  write_mahimahi(original, out);
  std::istringstream in(out.str());
  const Trace back = parse_mahimahi(in, "round-trip", bin_s);
  ASSERT_DOUBLE_EQ(back.duration_s(), original.duration_s());
  ASSERT_EQ(back.steps().size(), original.steps().size());
  for (std::size_t i = 0; i < back.steps().size(); ++i)
    EXPECT_NEAR(back.steps()[i].mbps, original.steps()[i].mbps, one_packet_mbps(bin_s) + 1e-9) << "step " << i;
}

TEST(Mahimahi, RoundTripKeepsEveryBinWithinOnePacket) {
  expect_round_trip(ar1_trace({115, 60, 0.8, 20, 300}, 120, 1, 7), 1);
  expect_round_trip(sine_trace(50, 40, 10, 30, 0.5), 0.5);
  expect_round_trip(constant_trace(0.5, 20), 1);  // under one packet per ms
  // Outages, at the start and at the end (the period still ends right).
  expect_round_trip(with_outages(constant_trace(30, 20), {{0, 3}, {17, 3}}), 1);
}

TEST(Mahimahi, WritingIsDeterministicAndSpreadsPacketsEvenly) {
  std::ostringstream first, second;
  write_mahimahi(constant_trace(6, 2), first);  // one packet every 2 ms
  write_mahimahi(constant_trace(6, 2), second);
  EXPECT_EQ(first.str(), second.str());
  std::istringstream lines(first.str());
  std::vector<long> stamps;
  for (long t; lines >> t;) stamps.push_back(t);
  ASSERT_EQ(stamps.size(), 1000u);
  EXPECT_EQ(stamps.front(), 1);
  EXPECT_EQ(stamps[1] - stamps[0], 2);
  EXPECT_EQ(stamps.back(), 2000);
}

TEST(TraceFormat, GuessedFromNameOrContent) {
  const fs::path csv = write_temp("guess.csv", "0,5\n1,6\n");
  const fs::path csv_content = write_temp("guess-csv.txt", "# c\ntime_s,mbps\n0,5\n");
  const fs::path headerless = write_temp("guess-plain.txt", "\n0,5\n");
  const fs::path mm = write_temp("guess.down", "1\n2\n");
  const fs::path odd = write_temp("guess.odd", "12.5\n");
  const fs::path empty = write_temp("guess.empty", "\n");
  EXPECT_EQ(guess_trace_format(csv.string()), TraceFormat::csv);
  EXPECT_EQ(guess_trace_format(csv_content.string()), TraceFormat::csv);
  EXPECT_EQ(guess_trace_format(headerless.string()), TraceFormat::csv);
  EXPECT_EQ(guess_trace_format(mm.string()), TraceFormat::mahimahi);
  EXPECT_DOUBLE_EQ(read_trace(mm.string()).mean_mbps(), 12);
  EXPECT_DOUBLE_EQ(read_trace(csv.string()).rate_at(1.5), 6);
  try {
    read_trace(odd.string());
    FAIL();
  } catch (const TraceError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot tell the format"));
    EXPECT_EQ(e.line(), 1u);
  }
  EXPECT_THROW(read_trace(empty.string()), TraceError);
  EXPECT_THROW(read_trace((fs::path(::testing::TempDir()) / "absent").string()), TraceError);
}

}  // namespace
}  // namespace st::traces
