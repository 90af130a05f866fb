// The engine end to end on the in-process transport: every system leaves
// all nodes with bitwise identical parameters, stellatrain at density 100%
// and staleness 0 computes what ddp computes, and the pipeline really
// overlaps communication with the next iteration's compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>
#include <vector>

#include "core/comm/inproc_transport.h"
#include "core/comm/mailbox.h"
#include "core/telemetry/metered_transport.h"
#include "core/train/node/control_agent.h"
#include "core/train/run/trainer.h"
#include "tests/csv_test_util.h"
#include "tests/free_port.h"
#include "tests/train_test_util.h"

namespace st::train {
namespace {

class EverySystem : public ::testing::TestWithParam<std::string> {};

TEST_P(EverySystem, AllNodesEndBitwiseIdentical) {
  for (int nodes : {2, 3}) {
    auto c = small_config(GetParam());
    c.nodes = nodes;
    c.iterations = 30;
    const auto result = train_real(c);
    ASSERT_EQ(result.checksums.size(), static_cast<std::size_t>(nodes));
    for (int r = 1; r < nodes; ++r) EXPECT_EQ(result.checksums[r], result.checksums[0]) << "rank " << r;
    ASSERT_FALSE(result.evaluations.empty());
    EXPECT_GT(result.evaluations.back().accuracy, 0.3) << "learns something in 30 steps (chance: 0.1)";
  }
}

INSTANTIATE_TEST_SUITE_P(Systems, EverySystem, ::testing::Values("stellatrain", "ddp", "topk-sync"),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Train, StellatrainAtFullDensityAndStalenessZeroMatchesDdp) {
  auto c = small_config("stellatrain");
  stellatrain_options(c).density = 1.0;
  stellatrain_options(c).staleness = 0;
  const auto ours = train_real(c);
  c.use_system("ddp");
  const auto ddp = train_real(c);
  // Only the order of float additions differs (allgather sums in rank
  // order, the ring sums chunk by chunk).
  EXPECT_LE(max_relative_difference(ours.final_parameters, ddp.final_parameters), 1e-5);
}

TEST(Train, DdpGlooGivesTheParametersOfDdp) {
#ifdef ST_WITHOUT_DDP_GLOO
  GTEST_SKIP() << "ddp-gloo is not in this build (ST_WITH_DDP_GLOO=OFF)";
#endif
  // The real PyTorch stack (c10d Reducer over ProcessGroupGloo, torch SGD)
  // against the engine's ddp (ring allreduce, sparse SGD with every index):
  // same models, shards and hyper-parameters, so only float rounding differs.
  for (int workers : {1, 2}) {
    auto c = small_config("ddp");
    c.gpus_per_node = workers;
    const auto ours = train_real(c);
    c.use_system("ddp-gloo");
    c.master_port = st::test::free_port();
    c.peer_timeout_s = 30;
    const auto gloo = train_real(c);
    ASSERT_EQ(gloo.checksums.size(), 2u);
    EXPECT_EQ(gloo.checksums[0], gloo.checksums[1]);
    EXPECT_LE(max_relative_difference(gloo.final_parameters, ours.final_parameters), 1e-5) << workers << " workers";
  }
}

TEST(Train, PipelineOverlapsCommunicationWithTheNextIteration) {
  // Slow messages: 200 ms per message makes every layer's exchange (ring of
  // 2 nodes, so one message) outlast the next forward and backward many
  // times over, so that CPU load from other tests (ctest -j) cannot hide
  // the difference (with 40 ms, a loaded CI run once measured 51 vs 42 ms;
  // staleness 1 overlaps two iterations with one pipeline, so expect ~0.55).
  auto c = small_config("stellatrain");
  c.gpus_per_node = 1;
  c.iterations = 12;
  c.inproc_latency_ms = 200;
  stellatrain_options(c).staleness = 1;
  const std::string dir = ::testing::TempDir() + "/overlap";
  c.out_dir = dir;
  const auto pipelined = train_real(c);
  stellatrain_options(c).staleness = 0;
  c.out_dir.clear();
  const auto serial = train_real(c);
  // The exchange outlasts compute, and with staleness 1 the iteration time
  // drops well below the staleness-0 (serial) iteration.
  EXPECT_GT(pipelined.mean_pipeline_ms, 150.0);  // nodes drift apart by up to one compute step
  EXPECT_LT(pipelined.mean_iteration_ms, serial.mean_iteration_ms * 0.8);
  // Telemetry shows it: in iterations.csv, an iteration's pipeline still runs
  // after the next iteration started.
  const auto table = st::testing::numeric_columns(st::testing::read_csv(dir + "/iterations.csv"));
  const auto& start = table.at("start_s");
  int overlapped = 0, rows = 0;
  for (std::size_t i = 0; i + 1 < start.size(); ++i) {
    // The backward ends after the wait, forward, backward and gather; the
    // pipeline runs on from there.
    double backward_end = start[i];
    for (const char* stage : {"wait_ms", "forward_ms", "backward_ms", "gather_ms"})
      backward_end += table.at(stage)[i] / 1e3;
    const double pipeline_end = backward_end + table.at("pipeline_ms")[i] / 1e3;
    overlapped += pipeline_end > start[i + 1];
    ++rows;
  }
  EXPECT_GE(overlapped, rows / 2) << "pipelines that ended after the next iteration started";
}

// No iteration count, a time budget alone: every system runs as many
// iterations as fit (StellaTrain keeps per-iteration state only while an
// iteration is in flight, so nothing is sized by a count up front).
TEST(Train, ATimeBudgetAloneBoundsARun) {
  for (const char* system : {"stellatrain", "ddp", "local-sgd"}) {
    auto c = small_config(system);
    c.iterations = kUnboundedIterations;
    c.time_budget_s = 1.5;
    c.out_dir = ::testing::TempDir() + "/time_only_" + system;
    std::filesystem::remove_all(c.out_dir);
    const auto result = train_real(c);
    std::ifstream in(c.out_dir + "/manifest.json");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("\"stopped_by_time_budget\": true"), std::string::npos) << system;
    EXPECT_GT(result.mean_iteration_ms, 0) << system;
    ASSERT_FALSE(result.evaluations.empty()) << system;
    EXPECT_GT(result.evaluations.back().iteration, 3) << system << ": iterations within 1.5 s";
  }
  auto unbounded = small_config("ddp");
  unbounded.iterations = kUnboundedIterations;
  EXPECT_THROW(train_real(unbounded), std::invalid_argument) << "no count and no time: refused";
}

TEST(Train, BadConfigurationNamesTheField) {
  auto c = small_config("stellatrain");
  stellatrain_options(c).staleness = 3;
  try {
    train_real(c);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("staleness"), std::string::npos) << e.what();
  }
  EXPECT_THROW(small_config("sgd-allreduce"), std::invalid_argument);
}

}  // namespace
}  // namespace st::train

namespace st::train {
namespace {

// A CSV file's column by header name, as text.
std::vector<std::string> csv_column(const std::string& path, const std::string& name) {
  return st::testing::read_csv(path).texts(name);
}

// iterations.csv's density column (rank 0's iterations).
std::vector<std::string> density_column(const std::string& out_dir) {
  return csv_column(out_dir + "/iterations.csv", "density");
}

// StellaTrain with its controller (a tick every 0.1 s, lookahead) on the
// real backend, the in-process transport throttled to 100 Mbps with 10 ms
// per message, writing to TempDir()/`folder` (emptied).
TrainConfig controlled_real_config(int iterations, const std::string& folder) {
  auto c = small_config("stellatrain");
  c.iterations = iterations;
  stellatrain_options(c).controller = true;
  stellatrain_options(c).control.interval_s = 0.1;
  stellatrain_options(c).compensation = "lookahead";
  c.inproc_latency_ms = 10;
  c.inproc_bandwidth_mbps = 100;
  c.out_dir = ::testing::TempDir() + "/" + folder;
  std::filesystem::remove_all(c.out_dir);
  return c;
}

// The controller on the real backend (threads, wall clock; the in-process
// transport throttled to 100 Mbps with 10 ms per message): it ticks, sends
// plans that every node applies at the same iteration (bitwise identical
// nodes), and records control.csv.
TEST(Controller, RunsOnTheRealBackend) {
  auto c = controlled_real_config(300, "controller_real");
  const auto result = train_real(c);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
  ASSERT_TRUE(std::filesystem::exists(c.out_dir + "/control.csv")) << "no control.csv";
  const auto effective = csv_column(c.out_dir + "/control.csv", "effective_iteration");
  EXPECT_GE(effective.size(), 2u);  // ticks
  // effective_iteration -1: nothing changed
  EXPECT_GE(std::count_if(effective.begin(), effective.end(), [](const std::string& e) { return e != "-1"; }), 1);
  // iterations.csv's density column shows the plans taking effect.
  const auto column = density_column(c.out_dir);
  EXPECT_GE(std::set<std::string>(column.begin(), column.end()).size(), 2u);
}

// With probe_at_start the nodes begin only after rank 0's start probes
// (ControlAgent::kStartProbes round trips of 2 x 10 ms) are answered, so
// rank 0's first iteration starts that late, the run still finishes with
// identical nodes, and the first tick's latency is the path's 10 ms.
TEST(Controller, ProbesBeforeTheFirstIterationOnTheRealBackend) {
  auto c = controlled_real_config(60, "controller_probe_at_start");
  stellatrain_options(c).control.probe_at_start = true;
  const auto result = train_real(c);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
  const auto starts = csv_column(c.out_dir + "/iterations.csv", "start_s");
  ASSERT_FALSE(starts.empty());
  EXPECT_GE(std::stod(starts.front()), 0.001 * 2 * 10 * ControlAgent::kStartProbes)
      << "rank 0 began before its start probes were answered";
  const auto latency = csv_column(c.out_dir + "/control.csv", "latency_ms");
  ASSERT_FALSE(latency.empty()) << "no tick";
  EXPECT_GE(std::stod(latency.front()), 10);
}

// With probe_at_start a node whose peer is lost before the start probes
// are answered still begins training (whose own exchange then meets the
// lost peer) instead of waiting forever: rank 1 when rank 0 fails before
// probing, and rank 0 when rank 1 fails before answering, even where the
// loss is known before the agent starts.
TEST(Controller, ALostPeerDoesNotHoldTheStartProbes) {
  for (int lost : {0, 1}) {
    SCOPED_TRACE("lost rank " + std::to_string(lost));
    const int waiting = 1 - lost;
    comm::InProcFabric fabric(2, comm::LinkDelay{std::chrono::milliseconds(5)});
    auto executor = runtime::make_thread_pool_executor(1);
    telemetry::MeteredTransport metered(fabric.endpoint(waiting), *executor);
    comm::Mailbox mailbox(metered);
    std::unique_ptr<control::Controller> controller;
    control::ControllerOptions options;
    options.probe_at_start = true;
    if (waiting == 0)
      controller = std::make_unique<control::Controller>(options, control::TrafficModel{{400000, 20000}, true, false, 2},
                                                         std::vector<std::vector<int>>{{1}, {1}}, 0.05, 1);
    ControlAgent agent(waiting, 2, *executor, metered, mailbox, std::move(controller), 0.05, {1}, nullptr, true);
    fabric.fail(lost);
    // Once the mailbox knows, the agent's receives from the lost rank fail
    // inside recv(), while start() is still setting up.
    std::promise<void> known;
    mailbox.recv(lost, 12345, [&known](std::exception_ptr, comm::Message&&) { known.set_value(); });
    ASSERT_EQ(known.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
    std::promise<void> began;
    agent.start([&began] { began.set_value(); });
    EXPECT_EQ(began.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "rank " << waiting << " still waits for the start probes";
    fabric.shutdown();
  }
}

TEST(DensityWarmup, FallsGeometricallyToTheBase) {
  DensityWarmup w;
  EXPECT_FALSE(w.on());
  EXPECT_DOUBLE_EQ(w.density_at(0, 0.01), 0.01);  // off
  w.iterations = 10;
  w.start = 0.5;
  EXPECT_DOUBLE_EQ(w.density_at(0, 0.05), 0.5);
  EXPECT_NEAR(w.density_at(5, 0.05), 0.5 * std::sqrt(0.1), 1e-12);  // halfway in log space
  EXPECT_DOUBLE_EQ(w.density_at(10, 0.05), 0.05);
  EXPECT_DOUBLE_EQ(w.density_at(3, 0.7), 0.7);  // never below the base
}

// The engine sends at the warm-up's density: iterations.csv shows the fall
// from `start` to the fixed density, and the nodes stay bitwise identical.
TEST(DensityWarmup, TheEngineSendsAtTheWarmUpsDensity) {
  auto c = small_config("stellatrain");
  c.iterations = 20;
  auto& o = stellatrain_options(c);
  o.density = 0.05;
  o.warmup.iterations = 10;
  o.warmup.start = 0.5;
  c.out_dir = ::testing::TempDir() + "/density_warmup";
  std::filesystem::remove_all(c.out_dir);
  const auto result = train_real(c);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
  const auto column = density_column(c.out_dir);
  ASSERT_EQ(column.size(), 20u);  // rank 0's iterations
  std::vector<double> densities;
  for (const auto& cell : column) densities.push_back(std::stod(cell));
  EXPECT_NEAR(*std::max_element(densities.begin(), densities.end()), 0.5, 1e-9);
  EXPECT_NEAR(*std::min_element(densities.begin(), densities.end()), 0.05, 1e-9);
  EXPECT_EQ(std::count_if(densities.begin(), densities.end(), [](double d) { return d > 0.0501; }), 10)
      << "the first 10 iterations run above 5%";
}

}  // namespace
}  // namespace st::train

namespace st::train {
namespace {

// Evaluations every iteration until the accuracy reaches eval_dense_until,
// then every eval_interval_after iterations; on the validation set the log
// and manifest say so.
TEST(Train, DenseEvaluationsUntilTheTargetThenSparse) {
  auto c = small_config("ddp");
  c.iterations = 40;
  c.eval_interval = 1;
  c.eval_interval_after = 10;
  c.eval_dense_until = 0.3;
  c.evaluate_on = "validation";
  c.eval_samples = 500;
  c.out_dir = ::testing::TempDir() + "/dense_evaluations";
  std::filesystem::remove_all(c.out_dir);
  const auto result = train_real(c);
  int reached_at = -1;
  std::vector<int> after;
  for (const auto& e : result.evaluations) {
    if (reached_at < 0 && e.accuracy >= 0.3) reached_at = e.iteration;
    else if (reached_at >= 0) after.push_back(e.iteration);
  }
  ASSERT_GE(reached_at, 0) << "the MLP passes 30% on the validation set";
  // Evaluations run asynchronously on the real backend: a few already asked
  // for may land after the one that reached the target.
  int sparse = 0;
  for (int iteration : after) sparse += iteration % 10 == 0 || iteration == c.iterations;
  EXPECT_GE(sparse, 1);
  EXPECT_LT(after.size(), static_cast<std::size_t>(c.iterations - reached_at)) << "not every iteration after";
  std::ifstream in(c.out_dir + "/manifest.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"on\": \"validation\""), std::string::npos);
}

}  // namespace
}  // namespace st::train
