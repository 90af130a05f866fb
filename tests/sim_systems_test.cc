// Every engine system inside ns-3 (virtual time; ddp-gloo runs only on real
// networks, and rides out a 10 s outage in tests/emu_run_test.sh): the DDP
// hooks and the systems whose clusters step on their own (local-sgd,
// cloudless-ma, cloudless-asgd-ga) rerun byte-identically, asynchronous ones
// included, and every system survives a
// WAN that drops to 0 Mbps for 10 s and for 60 s mid-run: it completes
// every iteration without an error, and its results show the outage (a
// synchronous system's iteration spans it; cloudless-ma trains through it
// and skips the averaging periods it covered). A run the watchdog stops
// keeps what explains it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>

#include "core/collective/ring_run.h"
#include "core/control/traffic_model.h"
#include "core/train/run/backend.h"
#include "core/train/run/trainer.h"
#include "sim/sim_backend.h"
#include "tests/csv_test_util.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"
#include "traces/generators.h"
#include "traces/trace_io.h"


namespace st::sim {
namespace {

namespace fs = std::filesystem;

constexpr double kOutageStartS = 3;

using net::testing::read_file;
using net::testing::traced_link;
using net::testing::two_clusters;
using testing::sim_run;

// 2 clusters x 1 node, 20 ms one way; both directions replay `trace`.
SimRunConfig traced_clusters(const traces::Trace& trace) { return sim_run(two_clusters(traced_link(trace))); }

traces::Trace outage_trace(double outage_s) {
  return traces::step_trace({{0, 115}, {kOutageStartS, 0}, {kOutageStartS + outage_s, 115}}, 3600);
}

train::TrainConfig mlp_config(const std::string& system, int iterations) {
  auto c = train::small_config(system);
  c.iterations = iterations;
  c.weight_decay = 0;
  c.eval_samples = 200;
  // Each system takes the options it has.
  train::set_option(c, "averaging_period", "4");
  train::set_option(c, "accumulation_steps", "2");
  train::set_option(c, "max_staleness", "4");
  return c;
}

std::string test_name(const std::string& system) {
  std::string n = system;
  std::replace(n.begin(), n.end(), '-', '_');
  return n;
}

class NewSystemInSim : public ::testing::TestWithParam<std::string> {};

TEST_P(NewSystemInSim, RerunsAreByteIdentical) {
  const fs::path root = fs::path(::testing::TempDir()) / ("sim_systems_" + test_name(GetParam()));
  fs::remove_all(root);
  for (int run = 0; run < 2; ++run) {
    auto c = mlp_config(GetParam(), 24);
    c.eval_interval = 8;
    c.out_dir = (root / std::to_string(run)).string();
    auto backend = make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c);
    train::run_training(c, *backend);
  }
  for (const char* file : {"manifest.json", "iterations.csv", "eval.csv", "link.csv"}) {
    const auto first = read_file(root / "0" / file), second = read_file(root / "1" / file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_EQ(first, second) << file << " differs between two identical runs";
  }
}

INSTANTIATE_TEST_SUITE_P(Systems, NewSystemInSim,
                         ::testing::Values("ddp-fp16", "ddp-powersgd", "local-sgd", "cloudless-ma", "cloudless-asgd-ga"),
                         [](const auto& info) { return test_name(info.param); });

// dense_up_to in virtual time, where reruns are byte-identical: with every
// tensor under the bound a 1% run is the density-1 run bit for bit and
// sends exactly the bytes the controller's TrafficModel prices for it, and
// the ring's headers (the MLP's 10-element bias goes with u16 indices, the
// others as blocks);
// with all but the largest tensor under it the steps change and the bytes
// grow; the manifest lists the option only when it is on.
TEST(DenseUpToInSim, TensorsUnderTheBoundTravelWhole) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_dense_up_to";
  fs::remove_all(root);
  constexpr int kIterations = 8;
  auto run_with = [&](const std::string& density, std::size_t dense_up_to) {
    auto c = mlp_config("stellatrain", kIterations);
    train::set_option(c, "controller", "false");
    train::set_option(c, "density", density);
    train::set_option(c, "dense_up_to", std::to_string(dense_up_to));
    c.out_dir = (root / (density + "-" + std::to_string(dense_up_to))).string();
    auto backend = make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c);
    auto result = train::run_training(c, *backend);
    EXPECT_EQ(result.checksums.front(), result.checksums.back()) << density << " " << dense_up_to;
    return result;
  };
  constexpr std::size_t kEverything = 1000000000;
  const auto full = run_with("1", 0);
  const auto all_whole = run_with("0.01", kEverything);
  EXPECT_EQ(all_whole.checksums.front(), full.checksums.front());
  EXPECT_EQ(all_whole.bytes_sent, full.bytes_sent);

  std::vector<std::size_t> numels;
  for (const auto& layer : full.final_parameters) numels.push_back(layer.size());
  ASSERT_NE(std::find(numels.begin(), numels.end(), 10u), numels.end()) << "the classifier's bias, under one block";
  const control::TrafficModel priced{numels, true, false, 2, kEverything};
  // The ring adds its own header to each layer's message
  // (core/collective/ring_run.h), which the model leaves out.
  const double ring_headers = static_cast<double>(numels.size() * collective::detail::kHeaderBytes);
  EXPECT_DOUBLE_EQ(static_cast<double>(all_whole.bytes_sent),
                   kIterations * (priced.bytes_per_iteration(0.01) + ring_headers));

  std::vector<std::size_t> sorted = numels;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t bound = sorted[sorted.size() - 2];  // all but the largest tensor
  ASSERT_LT(bound, sorted.back());
  const auto none = run_with("0.01", 0);
  const auto small_whole = run_with("0.01", bound);
  EXPECT_NE(small_whole.checksums.front(), none.checksums.front());
  EXPECT_GT(small_whole.bytes_sent, none.bytes_sent);
  EXPECT_LT(small_whole.bytes_sent, all_whole.bytes_sent);
  EXPECT_EQ(read_file(root / "0.01-0" / "manifest.json").find("dense_up_to"), std::string::npos);
  EXPECT_NE(read_file(root / ("0.01-" + std::to_string(bound)) / "manifest.json")
                .find("\"dense_up_to\": " + std::to_string(bound)),
            std::string::npos);
}

// Local gradient clipping (StellaTrain's clip_norm) in virtual time, where
// reruns are byte-identical: a norm far under the gradients' changes the
// steps, a norm far over them clips nothing (the run is the one without
// it), the nodes stay identical, and the manifest lists the option only
// when it is on.
TEST(GradientClippingInSim, ChangesTheStepsOnlyWhenItClips) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_clipping";
  fs::remove_all(root);
  auto run_with = [&](const std::string& clip_norm) {
    auto c = mlp_config("stellatrain", 8);
    train::set_option(c, "controller", "false");
    train::set_option(c, "clip_norm", clip_norm);
    c.out_dir = (root / clip_norm).string();
    auto backend = make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c);
    const auto result = train::run_training(c, *backend);
    EXPECT_EQ(result.checksums.front(), result.checksums.back()) << clip_norm;
    return std::make_pair(result.checksums.front(), read_file(root / clip_norm / "manifest.json"));
  };
  const auto [off, off_manifest] = run_with("0");
  const auto [tight, tight_manifest] = run_with("0.0001");
  const auto [loose, loose_manifest] = run_with("1000000");
  EXPECT_NE(tight, off);
  EXPECT_EQ(loose, off);
  EXPECT_EQ(off_manifest.find("clip_norm"), std::string::npos);
  EXPECT_NE(tight_manifest.find("\"clip_norm\": 0.0001"), std::string::npos);
  // The summary says how often it clipped: every tensor-step at the tight
  // norm, none at the loose one.
  const auto clipping = [](const std::string& manifest) {
    return nlohmann::json::parse(manifest)["summary"]["system_stats"]["clipping"];
  };
  EXPECT_DOUBLE_EQ(clipping(tight_manifest)["clipped_share"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(clipping(loose_manifest)["clipped_share"].get<double>(), 0.0);
  EXPECT_EQ(clipping(loose_manifest)["tensor_steps"].get<int>(), 8 * 4);  // 8 iterations x the MLP's 4 tensors
  EXPECT_GT(clipping(loose_manifest)["tensors"].begin().value()["mean_norm"].get<double>(), 0.0);
  EXPECT_FALSE(nlohmann::json::parse(off_manifest)["summary"].contains("system_stats"));
}

struct OutageCase {
  std::string system;
  double outage_s;
};

// For gtest's test names and messages (instead of the case's raw bytes).
void PrintTo(const OutageCase& c, std::ostream* out) { *out << c.system << ", " << c.outage_s << " s outage"; }

class OutageInSim : public ::testing::TestWithParam<OutageCase> {};

struct IterationRow {
  double start_s = 0, iteration_ms = 0;
};

std::vector<IterationRow> rank0_iterations(const fs::path& csv) {
  const auto table = st::testing::read_csv(csv);
  const auto rank = table.texts("rank");
  const auto start = table.numbers("start_s"), ms = table.numbers("iteration_ms");
  std::vector<IterationRow> rows;
  for (std::size_t i = 0; i < table.rows.size(); ++i)
    if (rank[i] == "0") rows.push_back({start[i], ms[i]});
  return rows;
}

TEST_P(OutageInSim, CompletesAndShowsTheOutage) {
  const auto& param = GetParam();
  // Timing mode (no math on the host; the profile prices the compute): a
  // per-worker batch of 8192 makes an mlp iteration cost about 145 ms of
  // virtual compute, and enough of them that even a system that trains
  // through the outage is still running when it ends.
  const int iterations = static_cast<int>(1.5 * (kOutageStartS + param.outage_s) / 0.145);
  auto c = mlp_config(param.system, iterations);
  c.math = "timing";
  c.batch_per_worker = 8192;
  c.out_dir = (fs::path(::testing::TempDir()) /
               ("sim_outage_" + test_name(param.system) + "_" + std::to_string(static_cast<int>(param.outage_s))))
                  .string();
  fs::remove_all(c.out_dir);
  auto backend = make_sim_node_host(traced_clusters(outage_trace(param.outage_s)), c);
  const auto result = train::run_training(c, *backend);
  const auto summary = nlohmann::json::parse(read_file(fs::path(c.out_dir) / "manifest.json")).at("summary");
  EXPECT_EQ(summary.at("iterations_completed").get<int>(), c.iterations);
  EXPECT_FALSE(summary.contains("stopped_by_time_budget"));
  EXPECT_GT(result.wall_s, kOutageStartS + param.outage_s) << "the run should outlast the outage";

  const auto rows = rank0_iterations(fs::path(c.out_dir) / "iterations.csv");
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(c.iterations));
  double longest_ms = 0;
  int started_inside = 0;
  for (const auto& r : rows) {
    longest_ms = std::max(longest_ms, r.iteration_ms);
    if (r.start_s > kOutageStartS + 0.5 && r.start_s < kOutageStartS + param.outage_s - 0.5) ++started_inside;
  }
  std::printf("%s, %.0f s outage: longest iteration %.1f s, %d iterations started inside, simulated %.1f s%s\n",
              param.system.c_str(), param.outage_s, longest_ms / 1e3, started_inside, result.wall_s,
              summary.contains("system_stats") ? (", " + summary["system_stats"].dump()).c_str() : "");
  if (param.system == "cloudless-ma") {
    // Trains through the outage; the averaging round in flight lands after
    // it and the periods it covered are skipped.
    EXPECT_GT(started_inside, 10);
    EXPECT_LT(longest_ms, 0.5e3 * param.outage_s);
    EXPECT_GT(summary.at("system_stats").at("averaging_periods_skipped").get<int>(), 0);
  } else {
    // Everything else needs the link to go on within a few iterations: one
    // iteration waits out (most of) the outage.
    EXPECT_GT(longest_ms, 0.8e3 * param.outage_s);
  }
  // All nodes agree after a synchronous run; an asynchronous one's last
  // steps apply peers' updates in different orders, so only the count of
  // iterations is compared there.
  if (param.system == "ddp" || param.system == "topk-sync" || param.system == "stellatrain" ||
      param.system == "ddp-fp16" || param.system == "ddp-powersgd") {
    EXPECT_EQ(result.checksums[0], result.checksums[1]);
  }
}

// A run the watchdog stops (the link goes down for good at 3 s, the
// watchdog gives up 20 s later) fails with its error, and keeps what
// explains it: link.csv up to the failure, the timeline, and the error in
// manifest.json.
TEST(FailedRunInSim, KeepsItsLinkCsvTimelineAndError) {
  auto c = mlp_config("ddp", 1000);
  c.math = "timing";
  c.batch_per_worker = 8192;
  c.timeline = true;
  c.out_dir = (fs::path(::testing::TempDir()) / "sim_failed_run").string();
  fs::remove_all(c.out_dir);
  auto run = traced_clusters(traces::step_trace({{0, 115}, {kOutageStartS, 0}}, 3600));
  run.compute.executor.stall_timeout_s = 20;
  auto backend = make_sim_node_host(run, c);
  std::string error;
  try {
    train::run_training(c, *backend);
  } catch (const std::exception& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("no engine task ran for 20 s of virtual time"), std::string::npos) << error;
  const auto link = st::testing::read_csv(fs::path(c.out_dir) / "link.csv");
  const auto seconds = link.numbers("second");
  ASSERT_FALSE(seconds.empty());
  EXPECT_GE(*std::max_element(seconds.begin(), seconds.end()), kOutageStartS + 19);
  EXPECT_TRUE(fs::exists(fs::path(c.out_dir) / "timeline.json"));
  const auto manifest = nlohmann::json::parse(read_file(fs::path(c.out_dir) / "manifest.json"));
  EXPECT_EQ(manifest.at("failed").at("error").get<std::string>(), error);
  EXPECT_GT(manifest.at("failed").at("host").at("wan_bytes").get<double>(), 0);
}

std::vector<OutageCase> outage_cases() {
  std::vector<OutageCase> cases;
  for (const char* system : {"stellatrain", "ddp", "topk-sync", "ddp-fp16", "ddp-powersgd", "local-sgd", "cloudless-ma",
                             "cloudless-asgd-ga"})
    for (double seconds : {10.0, 60.0}) cases.push_back({system, seconds});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Systems, OutageInSim, ::testing::ValuesIn(outage_cases()), [](const auto& info) {
  return test_name(info.param.system) + "_" + std::to_string(static_cast<int>(info.param.outage_s)) + "s";
});

// A real trace with zero-rate seconds (Starlink on the Autobahn: 0 Mbps at
// 47 and 48 s, 4 Mbps at 49 s), cropped so the gap comes 7 s in: every
// system completes, and the synchronous ones show the gap as one long
// iteration.
class RealTraceWithZerosInSim : public ::testing::TestWithParam<std::string> {};

TEST_P(RealTraceWithZerosInSim, Completes) {
  const std::string path = std::string(ST_SHARED_TRACES_DIR) + "/real/starlink-autobahn-10min.csv";
  if (!std::ifstream(path)) GTEST_SKIP() << path << " is missing";
  const traces::Trace trace = traces::crop(traces::read_trace_csv(path), 40, 100);
  ASSERT_EQ(trace.rate_at(7.5), 0.0);
  auto c = mlp_config(GetParam(), 100);
  c.math = "timing";
  c.batch_per_worker = 8192;
  c.out_dir = (fs::path(::testing::TempDir()) / ("sim_real_zeros_" + test_name(GetParam()))).string();
  fs::remove_all(c.out_dir);
  auto backend = make_sim_node_host(traced_clusters(trace), c);
  const auto result = train::run_training(c, *backend);
  const auto summary = nlohmann::json::parse(read_file(fs::path(c.out_dir) / "manifest.json")).at("summary");
  EXPECT_EQ(summary.at("iterations_completed").get<int>(), c.iterations);
  EXPECT_GT(result.wall_s, 9.0) << "the run should outlast the zero-rate seconds";
  double longest_ms = 0;
  for (const auto& r : rank0_iterations(fs::path(c.out_dir) / "iterations.csv"))
    longest_ms = std::max(longest_ms, r.iteration_ms);
  std::printf("%s on %s: longest iteration %.2f s, simulated %.1f s\n", GetParam().c_str(), path.c_str(),
              longest_ms / 1e3, result.wall_s);
  if (GetParam() != "cloudless-ma" && GetParam() != "cloudless-asgd-ga") {
    EXPECT_GT(longest_ms, 1000);
  }
}

INSTANTIATE_TEST_SUITE_P(Systems, RealTraceWithZerosInSim,
                         ::testing::Values("stellatrain", "ddp", "topk-sync", "ddp-fp16", "ddp-powersgd", "local-sgd",
                                           "cloudless-ma", "cloudless-asgd-ga"),
                         [](const auto& info) { return test_name(info.param); });

}  // namespace
}  // namespace st::sim

namespace st::sim {
namespace {

// ns-3's simulator is process-wide: simulations run one after another (the
// reruns above), and a second backend while one is alive is refused rather
// than sharing (or wiping) its events; the first still runs afterwards.
TEST(SimBackendLifetime, OneAtATimeAndAnyNumberInSequence) {
  auto c = mlp_config("ddp", 3);
  auto first = make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c);
  EXPECT_THROW(make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c), std::logic_error);
  const auto result = train::run_training(c, *first);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
  first.reset();
  for (int run = 0; run < 2; ++run) {
    auto next = make_sim_node_host(traced_clusters(traces::constant_trace(115, 3600)), c);
    EXPECT_EQ(train::run_training(c, *next).checksums, result.checksums) << "run " << run;
  }
}

}  // namespace
}  // namespace st::sim
