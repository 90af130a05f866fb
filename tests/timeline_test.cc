// The run timeline (core/runtime/timeline.h): the executor decorator
// records each compute task from its start to the end of its charge, the
// transport decorator each send, and a run with `timeline` writes them as a
// Chrome trace in which the per-layer pipeline is visible.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/runtime/executor.h"
#include "core/runtime/timeline.h"
#include "core/train/run/trainer.h"
#include "tests/train_test_util.h"

namespace st {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(TimelineExecutor, RecordsEachComputeTaskFromWorkStartToItsEnd) {
  auto pool = runtime::make_thread_pool_executor(2);
  runtime::Timeline timeline;
  runtime::TimelineExecutor timed(*pool, timeline);
  std::atomic<int> done{0};
  timed.compute([] { std::this_thread::sleep_for(5ms); }, {runtime::TaskKind::kBackward, -1, 64, 1, 0}, [&] { ++done; });
  timed.compute([] {}, {runtime::TaskKind::kGather, 3, 100, 1, -1}, [&] { ++done; });
  timed.post([&] { ++done; });  // not a compute task: not recorded
  timed.run_until([&] { return done == 3; });
  ASSERT_EQ(timeline.size(), 2u);
  const fs::path path = fs::path(::testing::TempDir()) / "timeline_unit.json";
  timeline.write_chrome_trace(path.string());
  const auto trace = read_json(path);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") by_name[e["name"]] = e;
  ASSERT_TRUE(by_name.count("backward"));
  ASSERT_TRUE(by_name.count("gather 3"));
  EXPECT_GE(by_name["backward"]["dur"].get<double>(), 5000.0);  // microseconds
  EXPECT_EQ(by_name["backward"]["pid"], 1);
  EXPECT_NE(by_name["backward"]["tid"], by_name["gather 3"]["tid"]);  // worker lane vs CPU lane
  EXPECT_EQ(by_name["gather 3"]["args"]["layer"], 3);
}

TEST(Timeline, KeepsAtMostItsLimitAndCountsTheRest) {
  runtime::Timeline timeline(3);
  for (int i = 0; i < 5; ++i) timeline.add({"compress", i, 0, -1, runtime::Nanos(i), runtime::Nanos(i + 1), 0, -1});
  EXPECT_EQ(timeline.size(), 3u);
  EXPECT_EQ(timeline.dropped(), 2u);
  EXPECT_THROW(timeline.write_chrome_trace("/nonexistent-folder/t.json"), std::runtime_error);
}

// A real run (threads, in-process transport): every stage of StellaTrain's
// pipeline is on the timeline, per layer where it is per layer, and some
// layer's gather starts while a backward of its node still runs (gradients
// leave backward layer by layer; tests/train_per_layer_test.cc checks that
// strictly, this only that the timeline shows it).
TEST(TimelineRun, ShowsThePerLayerPipelineOfARun) {
  auto c = train::small_config("stellatrain");
  c.model = "cnn";
  c.iterations = 4;
  c.executor_threads = 8;  // room for gathers beside the four backwards
  c.out_dir = (fs::path(::testing::TempDir()) / "timeline_run").string();
  fs::remove_all(c.out_dir);
  c.timeline = true;
  train::train_real(c);
  const auto trace = read_json(fs::path(c.out_dir) / "timeline.json");
  std::set<std::string> kinds;
  std::size_t sends = 0;
  std::map<int, std::vector<std::pair<double, double>>> backwards;  // per node: [start, end)
  std::map<int, std::vector<double>> gathers;                       // per node: starts
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
    if (e["cat"] == "backward") backwards[e["pid"].get<int>()].push_back({ts, end});
    if (e["cat"] == "gather") gathers[e["pid"].get<int>()].push_back(ts);
    kinds.insert(e["cat"].get<std::string>());
    EXPECT_GE(e["dur"].get<double>(), 0.0);
    if (e["cat"] == "send") {
      ++sends;
      EXPECT_GT(e["args"]["bytes"].get<double>(), 0.0);
    }
  }
  for (const char* kind : {"forward", "backward", "gather", "compress", "optimize", "send"})
    EXPECT_TRUE(kinds.count(kind)) << kind;
  EXPECT_GT(sends, 0u);
  bool overlapped = false;
  for (const auto& [node, starts] : gathers)
    for (double g : starts)
      for (const auto& [b0, b1] : backwards[node]) overlapped |= g > b0 && g < b1;
  EXPECT_TRUE(overlapped) << "no gather started inside a backward";
  const auto manifest = read_json(fs::path(c.out_dir) / "manifest.json");
  EXPECT_EQ(manifest["summary"]["timeline"]["file"], "timeline.json");
  EXPECT_EQ(manifest["summary"]["timeline"]["dropped_spans"], 0);
  train::TrainConfig bad = c;
  bad.out_dir.clear();
  EXPECT_THROW(train::validate(bad), std::invalid_argument);
}

}  // namespace
}  // namespace st
