// core/telemetry: the windowed byte counters, the exchange log's summary
// of an iteration, and the telemetry codec (and its errors). Part of
// control_test (tests/CMakeLists.txt). Pure logic: no transport, no
// LibTorch.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string>
#include <vector>

#include "core/telemetry/byte_window.h"
#include "core/telemetry/exchange_log.h"
#include "core/telemetry/node_telemetry.h"
#include "tests/control_test_util.h"

namespace st {
namespace {

using testing::sample_telemetry;

using std::chrono::milliseconds;

TEST(ByteWindow, CountsTheLastSecondInSubWindows) {
  telemetry::ByteWindow w(3);
  w.add_sent(1, 1000, milliseconds(50));
  w.add_received(2, 500, milliseconds(150));
  w.add_sent(1, 2000, milliseconds(950));
  auto t = w.totals(milliseconds(999));
  EXPECT_EQ(t.sent[1], 3000u);
  EXPECT_EQ(t.received[2], 500u);
  EXPECT_EQ(t.span, milliseconds(999));
  // At 1.12 s the 0-100 ms sub-window has left the window, 100-200 ms
  // (which overlaps (0.12, 1.12]) not yet.
  t = w.totals(milliseconds(1120));
  EXPECT_EQ(t.sent[1], 2000u);
  EXPECT_EQ(t.received[2], 500u);
  EXPECT_EQ(t.span, milliseconds(1020));
  t = w.totals(milliseconds(5000));  // long idle: everything has aged out
  EXPECT_EQ(t.total_sent() + t.total_received(), 0u);
  EXPECT_THROW(w.add_sent(3, 1, milliseconds(1)), std::invalid_argument);
  EXPECT_THROW(telemetry::ByteWindow(0), std::invalid_argument);
}


TEST(Telemetry, RoundTripsAndNamesBadFields) {
  const auto t = sample_telemetry(1);
  const auto back = telemetry::decode_telemetry(telemetry::encode(t));
  EXPECT_EQ(back.rank, 1);
  EXPECT_EQ(back.batch, t.batch);
  EXPECT_EQ(back.exchange_bytes, t.exchange_bytes);
  EXPECT_DOUBLE_EQ(back.gpu_compute_ms[1], 35);
  auto bad = t;
  bad.density = 2;
  EXPECT_THROW(telemetry::decode_telemetry(telemetry::encode(bad)), telemetry::TelemetryError);
  bad = t;
  bad.gpu_compute_ms = {1};
  try {
    telemetry::decode_telemetry(telemetry::encode(bad));
    FAIL();
  } catch (const telemetry::TelemetryError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU times"), std::string::npos) << e.what();
  }
  EXPECT_THROW(telemetry::decode_telemetry({0xc1, 0x00}), telemetry::TelemetryError);  // not MessagePack
}

// The load and the exchanges' origin travel only when reported: a report
// without them encodes to the same bytes as before the fields existed
// (telemetry crosses the simulated WAN, so its size is part of a run's
// result).
TEST(Telemetry, SendsTheLoadAndTheExchangeOriginOnlyWhenReported) {
  struct Optional {
    double telemetry::NodeTelemetry::*field;
    const char* name;
    double absent;
  };
  for (const auto& [field, name, absent] : {Optional{&telemetry::NodeTelemetry::load_ms, "load_ms", 0},
                                            Optional{&telemetry::NodeTelemetry::exchange_origin_ms,
                                                     "exchange_origin_ms", -1}}) {
    auto t = sample_telemetry(1);
    const auto without = telemetry::encode(t);
    EXPECT_DOUBLE_EQ(telemetry::decode_telemetry(without).*field, absent) << name;
    t.*field = 289.4;
    const auto with = telemetry::encode(t);
    EXPECT_GT(with.size(), without.size()) << name;
    EXPECT_DOUBLE_EQ(telemetry::decode_telemetry(with).*field, 289.4) << name;
    t.*field = std::numeric_limits<double>::infinity();
    try {
      telemetry::decode_telemetry(telemetry::encode(t));
      FAIL() << name;
    } catch (const telemetry::TelemetryError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

// The exchange log summarises an iteration's exchanges from its earliest
// begin, and says where that was on the executor's clock.
TEST(ExchangeLog, SummarisesAnIterationFromItsEarliestBegin) {
  telemetry::ExchangeLog log;
  log.add(3, milliseconds(150), milliseconds(200));
  log.add(3, milliseconds(100), milliseconds(180));
  log.add(4, milliseconds(190), milliseconds(260));
  const auto summary = log.take(3);
  EXPECT_DOUBLE_EQ(summary.origin_ms, 100);
  EXPECT_DOUBLE_EQ(summary.busy_ms, 100);
  EXPECT_DOUBLE_EQ(summary.shortest_ms, 50);
  EXPECT_EQ(summary.intervals_ms, (std::vector<double>{0, 80, 50, 100}));
  EXPECT_TRUE(log.take(3).intervals_ms.empty());
  EXPECT_DOUBLE_EQ(log.take(4).origin_ms, 190);
}

}  // namespace
}  // namespace st
