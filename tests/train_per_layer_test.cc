// Per-layer gradient readiness on the real backend: ddp starts a bucket's
// allreduce and stellatrain compresses a layer while backward still runs on
// the earlier layers, as c10d's Reducer and the paper's pipeline do. A test
// node host wraps the real thread-pool executor and the in-process transport
// and records when each compute task ran and when each node first sent.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <vector>

#include "core/comm/inproc_transport.h"
#include "core/train/run/node_host.h"
#include "core/train/run/trainer.h"
#include "tests/train_test_util.h"

namespace st::train {
namespace {

using runtime::Nanos;

struct TaskSpan {
  runtime::TaskKind kind;
  int layer = -1;
  int node = -1;
  Nanos start{0}, end{0};
};

// Shared by the recording executor and transports.
struct Log {
  std::mutex mutex;
  std::vector<TaskSpan> tasks;
  std::vector<std::pair<int, Nanos>> sends;  // (rank, time)
};

class RecordingExecutor final : public runtime::Executor {
 public:
  RecordingExecutor(runtime::Executor& inner, Log& log) : inner_(inner), log_(log) {}
  Nanos now() const override { return inner_.now(); }
  void post(runtime::Task task) override { inner_.post(std::move(task)); }
  void post_after(Nanos delay, runtime::Task task) override { inner_.post_after(delay, std::move(task)); }
  void post_progress(int mark, runtime::Task task) override { inner_.post_progress(mark, std::move(task)); }
  void compute(runtime::Task work, runtime::ComputeCost cost, runtime::Task done) override {
    inner_.compute(
        [this, work = std::move(work), cost] {
          TaskSpan span{cost.kind, cost.layer, cost.node, inner_.now(), {}};
          work();
          span.end = inner_.now();
          std::lock_guard<std::mutex> lock(log_.mutex);
          log_.tasks.push_back(span);
        },
        cost, std::move(done));
  }
  void run_until(const std::function<bool()>& finished) override { inner_.run_until(finished); }
  int workers() const override { return inner_.workers(); }

 private:
  runtime::Executor& inner_;
  Log& log_;
};

class RecordingTransport final : public comm::Transport {
 public:
  RecordingTransport(comm::Transport& inner, runtime::Executor& clock, Log& log)
      : inner_(inner), clock_(clock), log_(log) {}
  comm::Rank rank() const override { return inner_.rank(); }
  int world_size() const override { return inner_.world_size(); }
  void on_receive(comm::ReceiveHandler handler) override { inner_.on_receive(std::move(handler)); }
  void on_error(comm::ErrorHandler handler) override { inner_.on_error(std::move(handler)); }
  void send(comm::Rank destination, uint32_t tag, std::vector<uint8_t> payload, comm::SendCallback on_done) override {
    {
      std::lock_guard<std::mutex> lock(log_.mutex);
      log_.sends.push_back({inner_.rank(), clock_.now()});
    }
    inner_.send(destination, tag, std::move(payload), std::move(on_done));
  }
  comm::TransportStats stats() const override { return inner_.stats(); }
  void close() override { inner_.close(); }

 private:
  comm::Transport& inner_;
  runtime::Executor& clock_;
  Log& log_;
};

class RecordingHost final : public NodeHost {
 public:
  explicit RecordingHost(int nodes)
      : pool_(runtime::make_thread_pool_executor(4)), executor_(*pool_, log_), fabric_(nodes) {
    for (int r = 0; r < nodes; ++r)
      transports_.push_back(std::make_unique<RecordingTransport>(fabric_.endpoint(r), executor_, log_));
  }
  std::string name() const override { return "recording"; }
  int world_size() const override { return static_cast<int>(transports_.size()); }
  std::vector<int> local_ranks() const override {
    std::vector<int> ranks;
    for (int r = 0; r < world_size(); ++r) ranks.push_back(r);
    return ranks;
  }
  runtime::Executor& executor() override { return executor_; }
  comm::Transport& transport(int node) override { return *transports_[static_cast<std::size_t>(node)]; }
  bool wall_clock() const override { return true; }
  nlohmann::json manifest() const override { return {{"backend", "recording"}}; }
  nlohmann::json finish(const std::string&) override { return nlohmann::json::object(); }
  void stop() override {
    for (auto& t : transports_) t->close();
    pool_.reset();  // joins the threads; the recording executor is not used after this
  }
  Log& log() { return log_; }

 private:
  Log log_;
  std::unique_ptr<runtime::Executor> pool_;
  RecordingExecutor executor_;
  comm::InProcFabric fabric_;
  std::vector<std::unique_ptr<RecordingTransport>> transports_;
};

// ddp's first bucket (fc2, fc1) is ready long before the convolutions'
// backward ends. A batch of 256 makes that backward last 50-300 ms here, so
// the window in which the bucket may leave is many scheduler ticks wide.
TrainConfig per_layer_config(const std::string& system) {
  auto c = cnn_config(system);
  c.dataset = "synthetic";
  c.gpus_per_node = 1;
  c.iterations = 4;
  c.batch_per_worker = 256;
  return c;
}

// Of the four iterations, how many must show the overlap. An engine that
// launches communication only after backward shows it in none; on a loaded
// machine (CI runs tests side by side) the thread that sends may not be
// scheduled before a short backward ends, so one iteration may miss it.
constexpr int kIterationsThatMustOverlap = 3;

// Node 0's backward tasks, in time order.
std::vector<TaskSpan> backwards_of_node0(Log& log) {
  std::vector<TaskSpan> out;
  for (const auto& t : log.tasks)
    if (t.kind == runtime::TaskKind::kBackward && t.node == 0) out.push_back(t);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  return out;
}

TEST(PerLayerBackward, DdpLaunchesABucketBeforeBackwardEnds) {
  RecordingHost backend(2);
  run_training(per_layer_config("ddp"), backend);
  auto& log = backend.log();
  const auto backwards = backwards_of_node0(log);
  ASSERT_EQ(backwards.size(), 4u);
  int early = 0;
  for (const auto& b : backwards) {
    bool sent_inside = false;
    for (const auto& [rank, at] : log.sends) sent_inside |= rank == 0 && at > b.start && at < b.end;
    early += sent_inside;
  }
  // The first bucket (the fully connected layers) leaves while the
  // convolutions' backward still runs.
  EXPECT_GE(early, kIterationsThatMustOverlap) << "iterations in which node 0 sent before its backward ended";
}

TEST(PerLayerBackward, StellatrainCompressesTheLastLayerBeforeBackwardEnds) {
  RecordingHost backend(2);
  auto c = per_layer_config("stellatrain");
  run_training(c, backend);  // fixed density: the engine's default
  auto& log = backend.log();
  const auto backwards = backwards_of_node0(log);
  ASSERT_EQ(backwards.size(), 4u);
  std::vector<TaskSpan> compress;
  for (const auto& t : log.tasks)
    if (t.kind == runtime::TaskKind::kCompress && t.node == 0) compress.push_back(t);
  int early = 0;
  for (const auto& b : backwards) {
    bool inside = false;
    // The classifier's layers (the last registered) are produced first.
    for (const auto& t : compress) inside |= t.layer >= 4 && t.start > b.start && t.end < b.end;
    early += inside;
  }
  EXPECT_GE(early, kIterationsThatMustOverlap) << "iterations in which node 0 compressed a layer inside its backward";
}

}  // namespace
}  // namespace st::train
