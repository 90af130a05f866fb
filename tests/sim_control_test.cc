// The controller on the sim backend (docs/control.md): reruns with the
// controller on stay byte-identical (control.csv included), and over a step
// trace (500 -> 50 -> 500 Mbps, 20 s each) the chosen density follows each
// step within 3 s of simulated time while the iteration time stays within
// 1.3x of the compute-bound pace that the smallest fixed density (1%) runs
// at in the same phase. With an early density switch each node takes a
// plan's density at its own next iteration. Probes sent every iteration, or two before the
// first iteration, find the latency floor where probes sent once per tick
// read the controller's own queue; where the controller keeps the link
// full, drains let them see it. Counting the
// parameter load in the compute window lets the rule fill the time the
// load leaves the link idle.
//
// The model is the MLP (cheap to really compute here) priced by a test
// profile with the CNN's measured forward and backward times, so the
// exchange has the headline's compute window to fit in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>

#include "core/train/run/trainer.h"
#include "sim/sim_backend.h"
#include "tests/csv_test_util.h"
#include "tests/sim_test_util.h"
#include "tests/train_test_util.h"
#include "traces/generators.h"

namespace st::sim {
namespace {

namespace fs = std::filesystem;

using net::testing::read_file;
using net::testing::traced_link;
using net::testing::two_clusters;
using testing::sim_run;

using testing::mlp_at_cnn_pace;

// 2 clusters x 1 node replaying `trace` both ways (20 ms, a 2-BDP buffer),
// priced by `profile`.
SimRunConfig traced_clusters(const traces::Trace& trace, const fs::path& profile) {
  return sim_run(two_clusters(traced_link(trace, 20, 2)), "profile", profile.string());
}

train::TrainConfig controlled_mlp(int iterations, const fs::path& out) {
  train::TrainConfig c;
  c.model = "mlp";
  c.dataset = "synthetic";
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.iterations = iterations;
  train::stellatrain_options(c).controller = true;
  train::stellatrain_options(c).compensation = "lookahead";
  c.eval_interval = 0;
  c.eval_samples = 200;
  c.quiet = true;
  c.out_dir = out.string();
  fs::remove_all(out);
  return c;
}

// Columns of a CSV file by header name (the numeric ones).
std::map<std::string, std::vector<double>> read_csv(const fs::path& path) {
  return st::testing::numeric_columns(st::testing::read_csv(path));
}

// Two identical controlled runs of 120 iterations over a 40/200 Mbps
// square trace, into root/0 and root/1 (`configure` changes the config);
// each must leave its nodes identical.
void two_identical_runs(const fs::path& root, const std::function<void(train::TrainConfig&)>& configure) {
  const auto profile = mlp_at_cnn_pace(root);
  const auto trace = traces::square_trace(40, 200, 2, 60);
  for (int run = 0; run < 2; ++run) {
    auto c = controlled_mlp(120, root / std::to_string(run));
    configure(c);
    auto backend = make_sim_node_host(traced_clusters(trace, profile), c);
    const auto result = train::run_training(c, *backend);
    EXPECT_EQ(result.checksums[0], result.checksums[1]) << "the nodes diverged";
  }
}

TEST(SimControl, RunsWithTheControllerAreByteIdentical) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_determinism";
  two_identical_runs(root, [](train::TrainConfig&) {});
  for (const char* file : {"manifest.json", "iterations.csv", "eval.csv", "link.csv", "control.csv"}) {
    const auto first = read_file(root / "0" / file), second = read_file(root / "1" / file);
    EXPECT_FALSE(first.empty()) << file;
    EXPECT_EQ(first, second) << file << " differs between two identical runs";
  }
  const auto control = read_csv(root / "0" / "control.csv");
  ASSERT_GE(control.at("density").size(), 3u);
  const auto [lo, hi] = std::minmax_element(control.at("density").begin(), control.at("density").end());
  EXPECT_GT(*hi, *lo) << "the controller never moved the density";
}

// With early_density_switch each node takes a plan's density from its own
// next iteration: rank 0 from the tick's iteration + 1 (staleness + 1
// iterations before the batches could switch), so for an iteration or so
// the two nodes compress at two densities. The sparse exchange still sums
// them exactly on both nodes (identical parameters), and reruns stay
// byte-identical.
TEST(SimControl, EachNodeTakesTheDensityAtItsNextIterationWhenAsked) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_early_density";
  two_identical_runs(root,
                     [](train::TrainConfig& c) { train::stellatrain_options(c).control.early_density_switch = true; });
  for (const char* file : {"iterations.csv", "control.csv"})
    EXPECT_EQ(read_file(root / "0" / file), read_file(root / "1" / file)) << file << " differs between two runs";
  const auto control = read_csv(root / "0" / "control.csv");
  const auto it = read_csv(root / "0" / "iterations.csv");  // rank 0's
  std::map<int, std::size_t> row;                             // by iteration
  for (std::size_t i = 0; i < it.at("iteration").size(); ++i) row[static_cast<int>(it.at("iteration")[i])] = i;
  int plans = 0, mixed = 0;
  for (std::size_t k = 0; k < control.at("iteration").size(); ++k) {
    if (control.at("effective_iteration")[k] < 0) continue;
    const int next = static_cast<int>(control.at("iteration")[k]) + 1;
    if (!row.count(next)) continue;
    ++plans;
    EXPECT_NEAR(it.at("density")[row[next]] / control.at("density")[k], 1, 1e-4)
        << "rank 0 did not take the plan of the tick at iteration " << next - 1 << " at its next iteration";
  }
  // Rank 1's density shows in what rank 0 received: an iteration whose
  // bytes each way differ by more than the index encoding's few percent
  // ran at two densities.
  for (std::size_t i = 0; i < it.at("iteration").size(); ++i)
    if (std::abs(it.at("bytes_received")[i] / it.at("bytes_sent")[i] - 1) > 0.1) ++mixed;
  EXPECT_GE(plans, 3);
  EXPECT_GE(mixed, 1) << "no iteration ran at two densities: the test no longer shows the point";
  std::cout << plans << " plans, " << mixed << " iterations at two densities\n";
}

using Columns = std::map<std::string, std::vector<double>>;

// A round-trip-bound run: GPUs 20x the CNN's pace (the MLP priced by
// `profile`), a constant 100 Mbps WAN, 20 ms one way, and a density warm-up
// whose large first messages (0.5 falling over 60 iterations) keep the WAN
// queue full at first, as in the paper-tta runs where probes read 30-60 ms
// against 20. `configure` sets the controller. Returns control.csv.
Columns round_trip_bound_run(const fs::path& dir, const fs::path& profile, int iterations, double budget_s,
                             const std::function<void(control::ControllerOptions&)>& configure) {
  auto c = controlled_mlp(iterations, dir);
  configure(train::stellatrain_options(c).control);
  train::stellatrain_options(c).warmup.iterations = 60;
  train::stellatrain_options(c).warmup.start = 0.5;
  c.time_budget_s = budget_s;
  auto backend = make_sim_node_host(traced_clusters(traces::constant_trace(100, 600), profile), c);
  train::run_training(c, *backend);
  return read_csv(dir / "control.csv");
}

void print_series(const std::string& label, const std::vector<double>& values, const std::string& unit) {
  std::cout << label << ":";
  for (double v : values) std::cout << " " << v;
  std::cout << " " << unit << "\n";
}

// With the soonest-target rule, probes sent once per tick leave as the
// tick's telemetry arrives, when the exchange is queued, and their minimum
// reads the queue; probes sent whenever telemetry arrives and none is out
// also see the gaps between exchanges, and from the second tick on the
// latency is the path's 20 ms. Per-tick probes plus two before the first
// iteration (`probe_at_start`), while nothing is queued, hold the path's
// 20 ms from the first tick on.
TEST(SimControl, ProbesEveryIterationFindTheLatencyFloor) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_probes";
  const auto profile = mlp_at_cnn_pace(root, 0.05);
  const char* names[3] = {"per tick", "every iteration", "per tick, and at the start"};
  std::vector<double> latency[3];
  for (int run = 0; run < 3; ++run) {
    const auto csv = round_trip_bound_run(root / std::to_string(run), profile, 200, 4,
                                          [&](control::ControllerOptions& o) {
                                            o.sparsity_cost = 0.15;
                                            o.probe_every_iteration = run == 1;
                                            o.probe_at_start = run == 2;
                                          });
    latency[run] = csv.at("latency_ms");
    ASSERT_GE(latency[run].size(), 3u);
    print_series(names[run], latency[run], "ms");
  }
  for (std::size_t tick = 1; tick < latency[1].size(); ++tick) EXPECT_LT(latency[1][tick], 20.6) << "tick " << tick;
  EXPECT_GT(*std::max_element(latency[0].begin() + 1, latency[0].end()), 20.6)
      << "the per-tick probes no longer read the queue: this test no longer shows the difference";
  for (std::size_t tick = 0; tick < latency[2].size(); ++tick)
    EXPECT_LT(latency[2][tick], 20.6) << "tick " << tick << ": the probe before the first iteration read a queue";
}

// The same run with the controller filling 95% of the link instead: the
// queue never empties, so even probes sent every iteration read it (36 ms
// against 20), the inflated latency makes the exchange's wait look planned,
// and the estimate climbs past the link with the density at its maximum.
// Draining the queue (a few iterations at min_density every few ticks, as
// BBR's ProbeRTT does) lets the probes see the floor, and the estimate then
// stays near the link.
TEST(SimControl, DrainsLetProbesSeeTheFloorOfAFullLink) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_drain";
  const auto profile = mlp_at_cnn_pace(root, 0.05);
  Columns runs[2];
  for (int drain = 0; drain < 2; ++drain) {
    runs[drain] = round_trip_bound_run(root / (drain ? "drain" : "no-drain"), profile, 400, 8,
                                       [&](control::ControllerOptions& o) {
                                         o.link_utilization = 0.95;
                                         o.probe_every_iteration = true;
                                         o.drain_every_ticks = drain ? 3 : 0;
                                       });
    std::cout << (drain ? "drain every 3 ticks:" : "no drain:") << "\n";
    print_series("  latency", runs[drain].at("latency_ms"), "ms");
    print_series("  estimate", runs[drain].at("estimated_mbps"), "Mbps");
  }
  const auto& stuck = runs[0].at("latency_ms");
  ASSERT_GE(stuck.size(), 5u);
  EXPECT_GT(stuck.back(), 30) << "the queue no longer stays full without drains: this test no longer shows the point";
  EXPECT_GT(runs[0].at("estimated_mbps").back(), 150);
  const auto& drained = runs[1].at("latency_ms");
  ASSERT_GE(drained.size(), 5u);
  EXPECT_LT(drained.back(), 20.6) << "drains did not let the probes see the path's 20 ms";
  EXPECT_LT(runs[1].at("estimated_mbps").back(), 130) << "the estimate ran past the 100 Mbps link";
}

// Mean of an iterations.csv column over rank 0's rows whose index `keep`
// accepts (0 when none does).
template <typename Keep>
double rank0_mean(const Columns& it, const std::string& column, Keep keep) {
  double sum = 0;
  int count = 0;
  for (std::size_t i = 0; i < it.at(column).size(); ++i)
    if (it.at("rank")[i] == 0 && keep(i)) sum += it.at(column)[i], ++count;
  return count ? sum / count : 0;
}

// Mean of iteration_ms over rank 0's iterations that start in [from, to).
double mean_iteration_ms(const Columns& it, double from, double to) {
  const auto& start = it.at("start_s");
  return rank0_mean(it, "iteration_ms", [&](std::size_t i) { return start[i] >= from && start[i] < to; });
}

TEST(SimControl, DensityFollowsAStepTraceWithin3Seconds) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_step";
  const auto profile = mlp_at_cnn_pace(root);
  const auto trace = traces::step_trace({{0, 500}, {20, 50}, {40, 500}}, 60);
  const int iterations = 1700;  // about 62 simulated s at the compute-bound pace
  auto adaptive = controlled_mlp(iterations, root / "adaptive");
  adaptive.time_budget_s = 60;
  auto fixed = controlled_mlp(iterations, root / "fixed-1pct");
  train::stellatrain_options(fixed).controller = false;
  train::stellatrain_options(fixed).density = 0.01;
  fixed.time_budget_s = 60;
  for (auto* c : {&adaptive, &fixed}) {
    auto backend = make_sim_node_host(traced_clusters(trace, profile), *c);
    train::run_training(*c, *backend);
  }
  const auto control = read_csv(root / "adaptive" / "control.csv");
  const auto& time = control.at("time_s");
  const auto& density = control.at("density");
  auto density_at = [&](double t) {
    double d = density.front();
    for (std::size_t i = 0; i < time.size() && time[i] <= t; ++i) d = density[i];
    return d;
  };
  const double fast = density_at(19.9), slow = density_at(39.9), fast_again = density_at(59.9);
  std::cout << "density: fast " << fast << ", slow " << slow << ", fast again " << fast_again << "\n";
  // 500 Mbps fills the compute window at the 50% upper bound; 50 Mbps at
  // about a tenth.
  EXPECT_GT(fast, 3 * slow);
  EXPECT_GT(fast_again, 3 * slow);
  // Within 3 s of each step the density has moved most of the way. Under
  // ctest's pinned AVX2 kernels (tests/CMakeLists.txt); run by hand under
  // AVX-512 the step up waits until 43.3 s (docs/control-measured.md, "A step trace").
  EXPECT_LE(density_at(23), slow * 1.5) << "no response to 500 -> 50 Mbps within 3 s";
  EXPECT_GE(density_at(43), fast_again / 1.5) << "no response to 50 -> 500 Mbps within 3 s";

  const auto adaptive_it = read_csv(root / "adaptive" / "iterations.csv");
  const auto fixed_it = read_csv(root / "fixed-1pct" / "iterations.csv");
  for (const auto& [from, to] : std::vector<std::pair<double, double>>{{3, 20}, {23, 40}, {43, 60}}) {
    const double a = mean_iteration_ms(adaptive_it, from, to), f = mean_iteration_ms(fixed_it, from, to);
    std::cout << "phase [" << from << ", " << to << ") s: adaptive " << a << " ms, fixed 1% " << f << " ms\n";
    ASSERT_GT(f, 0);
    EXPECT_LE(a, 1.3 * f) << "phase [" << from << ", " << to << ")";
  }
}

// Mean of an iterations.csv column over rank 0's iterations from `from` on.
double mean_from(const Columns& it, const std::string& column, int from) {
  return rank0_mean(it, column, [&](std::size_t i) { return it.at("iteration")[i] >= from; });
}

// The exchange of iteration t overlaps iteration t + 1's parameter load as
// well as its forward and backward. With the MLP priced so that the load
// (the read through the lookahead's view and into each GPU replica) takes
// about as long as the compute, over a constant 20 Mbps link: counting the
// load in the window (window_includes_load) puts it in control.csv's
// compute_ms and lets the paper's rule send more than twice the bytes,
// while the iteration, which the load was already part of, lengthens by
// under 10%.
TEST(SimControl, CountingTheLoadFillsTheWindowItLeftIdle) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_load";
  fs::create_directories(root);
  const auto profile = root / "mlp-slow-load.yaml";
  std::ofstream(profile) << "device: test-cpu\n"
                            "cpu: {gather_ns_per_element: 0.25, compress_ns_per_element: 0.36, optimize_ns_per_index: 1.9,\n"
                            "      view_ns_per_element: 100, copy_ns_per_element: 50}\n"
                            "accelerator: {optimize_dense_ns_per_element: 1.4, compress_gpu_ns_per_element: 112}\n"
                            "models:\n  mlp: {batch: 64, forward_ms: 21.877, backward_ms: 14.353}\n";
  Columns control[2], iterations[2];
  for (int counted = 0; counted < 2; ++counted) {
    const auto dir = root / (counted ? "load-counted" : "compute-only");
    auto c = controlled_mlp(150, dir);
    train::stellatrain_options(c).control.window_includes_load = counted == 1;
    auto backend = make_sim_node_host(traced_clusters(traces::constant_trace(20, 600), profile), c);
    train::run_training(c, *backend);
    control[counted] = read_csv(dir / "control.csv");
    iterations[counted] = read_csv(dir / "iterations.csv");
    ASSERT_GE(control[counted].at("compute_ms").size(), 3u);
  }
  const double load_ms = mean_from(iterations[1], "load_ms", 0);
  std::cout << "load " << load_ms << " ms; compute_ms " << control[0].at("compute_ms").back() << " -> "
            << control[1].at("compute_ms").back() << "\n";
  ASSERT_GT(load_ms, 10);
  EXPECT_NEAR(control[1].at("compute_ms").back() - control[0].at("compute_ms").back(), load_ms, 0.05 * load_ms);
  const double bytes[2] = {mean_from(iterations[0], "bytes_sent", 50), mean_from(iterations[1], "bytes_sent", 50)};
  const double period[2] = {mean_from(iterations[0], "iteration_ms", 50), mean_from(iterations[1], "iteration_ms", 50)};
  std::cout << "bytes per iteration " << bytes[0] << " -> " << bytes[1] << "; iteration " << period[0] << " -> "
            << period[1] << " ms\n";
  EXPECT_GT(bytes[1], 2 * bytes[0]);
  EXPECT_LT(period[1], 1.1 * period[0]);
}

// Two clusters whose GPUs differ 2.5x in speed (per-node profiles), a fast
// WAN: the controller's batch split brings the GPUs' compute times within
// 10% of each other and raises samples per second by at least 1.3x over
// equal batches, with no loss of accuracy.
TEST(SimControl, BatchSplitEqualisesUnequalGpus) {
  const fs::path root = fs::path(::testing::TempDir()) / "sim_control_batches";
  const auto fast = mlp_at_cnn_pace(root, 1.0), slow = mlp_at_cnn_pace(root, 2.5);
  auto network = traced_clusters(traces::constant_trace(1000, 600), fast);
  network.compute.compute.node_profiles = {fast.string(), slow.string()};
  double iteration_ms[2] = {0, 0}, accuracy[2] = {0, 0};
  for (int balanced = 0; balanced < 2; ++balanced) {
    auto c = controlled_mlp(300, root / (balanced ? "balanced" : "equal"));
    c.dataset = "fashion-mnist";
    train::stellatrain_options(c).control.adapt_batch = balanced == 1;
    c.eval_interval = 0;
    c.eval_samples = 5000;
    auto backend = make_sim_node_host(network, c);
    const auto result = train::run_training(c, *backend);
    accuracy[balanced] = result.evaluations.back().accuracy;
    const auto it = read_csv(fs::path(c.out_dir) / "iterations.csv");
    iteration_ms[balanced] = mean_iteration_ms(it, it.at("start_s")[it.at("start_s").size() / 2], 1e9);
  }
  // The last batch split, node 0 (fast GPUs) and node 1 (slow).
  const auto batches = st::testing::read_csv(root / "balanced" / "control.csv").texts("batch");
  ASSERT_FALSE(batches.empty());
  const auto last = st::testing::parse_batch_cell(batches.back());
  ASSERT_EQ(last.size(), 2u) << batches.back();
  const int fast_batch = last[0].at(0), slow_batch = last[1].at(0);
  const double fast_ms = fast_batch * (21.877 + 14.353) / 64, slow_ms = slow_batch * 2.5 * (21.877 + 14.353) / 64;
  std::cout << "batches " << fast_batch << " / " << slow_batch << ": compute " << fast_ms << " / " << slow_ms
            << " ms; iteration " << iteration_ms[0] << " -> " << iteration_ms[1] << " ms; accuracy " << accuracy[0]
            << " -> " << accuracy[1] << "\n";
  EXPECT_LE(std::max(fast_ms, slow_ms) / std::min(fast_ms, slow_ms), 1.10);
  EXPECT_GE(iteration_ms[0] / iteration_ms[1], 1.3) << "samples per second did not rise 1.3x";
  EXPECT_GE(accuracy[1], accuracy[0] - 0.01);
}

}  // namespace
}  // namespace st::sim
