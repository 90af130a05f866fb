// Unit tests of two engine pieces every system leans on: the versioned
// master copy (the staleness barrier: continuations run once every layer
// reaches a version) and the results writer (files, columns, manifest
// updates written by rename).
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/train/run/results.h"
#include "core/train/node/versioned_parameters.h"

namespace st::train {
namespace {

namespace fs = std::filesystem;

// Posted tasks wait in a queue until the test runs them.
class QueueExecutor final : public runtime::Executor {
 public:
  runtime::Nanos now() const override { return runtime::Nanos{0}; }
  void post(runtime::Task task) override { queue_.push_back(std::move(task)); }
  void post_after(runtime::Nanos, runtime::Task task) override { post(std::move(task)); }
  void compute(runtime::Task work, runtime::ComputeCost, runtime::Task done) override {
    work();
    post(std::move(done));
  }
  void post_progress(int, runtime::Task task) override { post(std::move(task)); }
  void run_until(const std::function<bool()>& finished) override {
    while (!finished() && !queue_.empty()) run_one();
  }
  int workers() const override { return 1; }

  void run_all() {
    while (!queue_.empty()) run_one();
  }
  std::size_t queued() const { return queue_.size(); }

 private:
  void run_one() {
    auto task = std::move(queue_.front());
    queue_.pop_front();
    task();
  }
  std::deque<runtime::Task> queue_;
};

TEST(VersionedParameters, ContinuationsRunOnceTheSlowestLayerGetsThere) {
  QueueExecutor executor;
  VersionedParameters master(executor, {{1, 2}, {3}, {4, 5, 6}});
  std::vector<int> ran;
  master.when_all_at_least(0, [&] { ran.push_back(0); });  // already true: posted at once
  master.when_all_at_least(1, [&] { ran.push_back(1); });
  master.when_all_at_least(2, [&] { ran.push_back(2); });
  executor.run_all();
  EXPECT_EQ(ran, (std::vector<int>{0}));
  master.publish(0, 1);
  master.publish(2, 2);
  executor.run_all();
  EXPECT_EQ(ran, (std::vector<int>{0})) << "layer 1 is still at version 0";
  EXPECT_EQ(master.min_version(), 0);
  master.publish(1, 1);
  executor.run_all();
  EXPECT_EQ(ran, (std::vector<int>{0, 1}));
  master.publish(0, 2);
  master.publish(1, 2);
  executor.run_all();
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(master.version(2), 2);
}

TEST(VersionedParameters, ReadersSeeTheInstalledViewAndChecksumsFollowTheBytes) {
  QueueExecutor executor;
  VersionedParameters a(executor, {{1, 2, 3}}), b(executor, {{1, 2, 3}});
  EXPECT_EQ(a.checksum(), b.checksum());
  b.with_layer(0, [](float* data, std::size_t) { data[1] = 2.5f; });
  EXPECT_NE(a.checksum(), b.checksum());
  // A view (e.g. weight prediction) changes what readers get, not what is stored.
  a.set_view([](std::size_t, const float* stored, std::size_t n, int target, float* out) {
    for (std::size_t i = 0; i < n; ++i) out[i] = stored[i] + static_cast<float>(target);
  });
  std::vector<float> read(3);
  a.read_layer(0, 10, read.data());
  EXPECT_EQ(read, (std::vector<float>{11, 12, 13}));
  EXPECT_EQ(a.snapshot(), (std::vector<std::vector<float>>{{1, 2, 3}})) << "snapshot reads at the layer's version (0)";
  EXPECT_EQ(a.checksum(), VersionedParameters(executor, {{1, 2, 3}}).checksum());
  // A change in a layer's last float and one in a second layer both show.
  EXPECT_NE(a.checksum(), VersionedParameters(executor, {{1, 2, 4}}).checksum());
  EXPECT_NE(VersionedParameters(executor, {{1, 2, 3}, {5}}).checksum(),
            VersionedParameters(executor, {{1, 2, 3}, {6}}).checksum());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ResultsWriter, WritesItsFilesAndUpdatesTheManifestByRename) {
  const fs::path dir = fs::path(::testing::TempDir()) / "st-results-writer" / "nested";
  fs::remove_all(dir.parent_path());
  {
    ResultsWriter writer(dir.string(), {{"system", "ddp"}});
    IterationRecord r;
    r.rank = 1;
    r.iteration = 7;
    r.bytes_sent = 42;
    r.staleness = 2;
    r.batch = {32, 16};
    r.device_backward_ms = 1.25;
    writer.add_iteration(r);
    writer.add_eval({1.5, 7, 0.875, 0.3, 100});
    writer.update_manifest({{"summary", {{"complete", true}}}});
  }
  const auto manifest = nlohmann::json::parse(read_text(dir / "manifest.json"));
  EXPECT_EQ(manifest["system"], "ddp");
  EXPECT_EQ(manifest["summary"]["complete"], true);
  std::istringstream iterations(read_text(dir / "iterations.csv"));
  std::string header, row;
  std::getline(iterations, header);
  std::getline(iterations, row);
  EXPECT_NE(header.find("bytes_sent"), std::string::npos);
  EXPECT_NE(header.find(",staleness,batch,device_forward_ms,device_backward_ms"), std::string::npos);
  EXPECT_EQ(row.rfind("1,7,", 0), 0u) << row;
  EXPECT_NE(row.find(",2.000,32;16,0.000,1.250"), std::string::npos) << row;
  EXPECT_NE(read_text(dir / "eval.csv").find("1.500000,7,0.875000,0.300000,100"), std::string::npos);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_NE(entry.path().extension(), ".tmp") << "left behind: " << entry.path();
}

TEST(ResultsWriter, WithoutAFolderRecordsNothing) {
  ResultsWriter writer("", {{"system", "ddp"}});
  writer.add_iteration(IterationRecord{});
  writer.update_manifest({{"summary", {}}});
  EXPECT_EQ(writer.dir(), "");
}

TEST(ResultsWriter, AFolderThatCannotBeMadeIsAnErrorNamingIt) {
  const fs::path file = fs::path(::testing::TempDir()) / "st-results-writer-file";
  std::ofstream(file) << "not a folder";
  try {
    ResultsWriter writer((file / "run").string(), {});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace st::train
