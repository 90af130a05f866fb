// The ddp-gloo baseline on the real c10d stack: several ranks, each a thread
// of this process with its own TCPStore client and ProcessGroupGloo (rank 0
// also hosts the store), train a small model on disjoint synthetic shards.
// Checked against a single-process reference that averages every worker's
// gradient by hand and steps torch::optim::SGD.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <thread>

#include "c10d_test_util.h"
#include "core/c10d/gloo_ddp.h"
#include "core/c10d/gloo_group.h"
#include "core/data/dataset.h"
#include "core/data/sampler.h"
#include "core/data/synthetic.h"
#include "core/model/model.h"
#include "free_port.h"

namespace st::c10d_ddp {
namespace {

class OneThread : public ::testing::Environment {
 public:
  void SetUp() override { at::set_num_threads(1); }
};
const auto* const kThreads = ::testing::AddGlobalTestEnvironment(new OneThread);

using st::test::free_port;
using test::loopback;
using test::run_ranks;

struct Scenario {
  std::string model = "mlp";
  int world_size = 2;
  int local_workers = 1;
  int steps = 5;
  std::size_t batch_size = 16;
  GlooDdpOptions ddp;
};

GlooDdpOptions small_buckets(GradientEngine engine) {
  GlooDdpOptions options;
  options.engine = engine;
  options.first_bucket_cap_bytes = 8 * 1024;  // several buckets even for the mlp
  options.bucket_cap_bytes = 64 * 1024;
  options.sgd = {0.05, 0.9, 1e-4};
  return options;
}

constexpr model::ModelShape kShape{1, 28, 28, 10};
constexpr uint64_t kInitSeed = 42;
constexpr uint64_t kShardSeed = 7;

const data::Dataset& synthetic_train() {
  static const std::unique_ptr<data::Dataset> dataset = [] {
    data::SyntheticOptions options;
    options.train_size = 1024;
    return data::make_synthetic_dataset(options, data::Split::kTrain);
  }();
  return *dataset;
}

// batches[step][worker] for global worker index rank * G + g: every worker in
// the job has its own shard, as DistributedSampler would give.
std::vector<std::vector<data::Batch>> batches_of_rank(const Scenario& s, int rank) {
  const int workers_in_job = s.world_size * s.local_workers;
  std::vector<data::BatchStream> streams;
  for (int g = 0; g < s.local_workers; ++g)
    streams.emplace_back(
        data::ShardSampler(synthetic_train().size(), workers_in_job, rank * s.local_workers + g, kShardSeed));
  std::vector<std::vector<data::Batch>> batches(s.steps);
  for (int step = 0; step < s.steps; ++step)
    for (auto& stream : streams) batches[step].push_back(synthetic_train().get_batch(stream.next(s.batch_size)));
  return batches;
}

std::vector<at::Tensor> buffers_of(const model::Model& model) {
  std::vector<at::Tensor> buffers;
  for (const auto& buffer : model.named_buffers()) buffers.push_back(buffer.tensor.clone());
  return buffers;
}

struct RankOutcome {
  std::vector<at::Tensor> parameters;
  GradientEngine engine = GradientEngine::kAuto;
  StepTelemetry last_step;
  TelemetryTotals totals;
  std::vector<std::vector<std::size_t>> layout;
};

// Models are built up front on this thread: make_model seeds LibTorch's
// global generator, which rank threads would race on. Each rank gets a
// different seed: the initial broadcast must make them equal.
std::vector<std::vector<model::Model>> replicas_per_rank(const Scenario& s) {
  std::vector<std::vector<model::Model>> replicas(s.world_size);
  for (int r = 0; r < s.world_size; ++r)
    for (int g = 0; g < s.local_workers; ++g) replicas[r].push_back(model::make_model(s.model, kShape, kInitSeed + r));
  return replicas;
}

std::vector<RankOutcome> run_ddp(const Scenario& s) {
  const auto replicas = replicas_per_rank(s);
  std::vector<std::vector<std::vector<data::Batch>>> batches;
  for (int r = 0; r < s.world_size; ++r) batches.push_back(batches_of_rank(s, r));
  std::vector<RankOutcome> outcomes(s.world_size);
  const auto errors = run_ranks(s.world_size, [&](int r, uint16_t port) {
    GlooDdp ddp(GlooGroup::connect(loopback(r, s.world_size, port)), replicas[r], s.ddp);
    for (int step = 0; step < s.steps; ++step) ddp.train_step(batches[r][step]);
    outcomes[r] = {replicas[r][0].parameters(), ddp.engine(), ddp.last_step(), ddp.totals(), ddp.bucket_layout()};
    ddp.group().barrier();  // keep every group alive until all ranks are done
  });
  EXPECT_EQ(errors, std::vector<std::string>(s.world_size, ""));
  return outcomes;
}

// Single process: every worker's gradient computed separately, averaged by
// hand, then torch::optim::SGD; starts from rank 0's initial parameters.
std::vector<at::Tensor> reference_parameters(const Scenario& s) {
  model::Model model = model::make_model(s.model, kShape, kInitSeed);
  const auto parameters = model.parameters();
  torch::optim::SGD optimizer(
      parameters,
      torch::optim::SGDOptions(s.ddp.sgd.lr).momentum(s.ddp.sgd.momentum).weight_decay(s.ddp.sgd.weight_decay));
  std::vector<std::vector<std::vector<data::Batch>>> batches;
  for (int r = 0; r < s.world_size; ++r) batches.push_back(batches_of_rank(s, r));
  const double workers_in_job = s.world_size * s.local_workers;
  for (int step = 0; step < s.steps; ++step) {
    std::vector<at::Tensor> sum;
    for (int r = 0; r < s.world_size; ++r) {
      for (int g = 0; g < s.local_workers; ++g) {
        model.zero_grad();
        const data::Batch& batch = batches[r][step][g];
        torch::nn::functional::cross_entropy(model.forward(batch.images), batch.labels).backward();
        for (std::size_t i = 0; i < parameters.size(); ++i) {
          if (sum.size() <= i)
            sum.push_back(parameters[i].grad().clone());
          else
            sum[i] += parameters[i].grad();
        }
      }
    }
    for (std::size_t i = 0; i < parameters.size(); ++i) parameters[i].mutable_grad() = sum[i] / workers_in_job;
    optimizer.step();
  }
  return parameters;
}

void expect_ranks_bitwise_identical(const std::vector<RankOutcome>& outcomes) {
  for (std::size_t r = 1; r < outcomes.size(); ++r) {
    ASSERT_EQ(outcomes[r].parameters.size(), outcomes[0].parameters.size());
    for (std::size_t i = 0; i < outcomes[0].parameters.size(); ++i)
      EXPECT_TRUE(at::equal(outcomes[r].parameters[i], outcomes[0].parameters[i]))
          << "rank " << r << " parameter " << i << " differs from rank 0";
  }
}

void expect_matches_reference(const std::vector<at::Tensor>& actual, const std::vector<at::Tensor>& reference) {
  ASSERT_EQ(actual.size(), reference.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double relative = (actual[i] - reference[i]).norm().item<double>() / reference[i].norm().item<double>();
    EXPECT_LT(relative, 1e-5) << "parameter " << i;
  }
}

void expect_layout_covers_every_parameter(const std::vector<std::vector<std::size_t>>& layout, std::size_t count) {
  std::vector<int> seen(count, 0);
  for (const auto& bucket : layout)
    for (std::size_t i : bucket) ++seen.at(i);
  EXPECT_EQ(seen, std::vector<int>(count, 1));
}

void check_scenario(const Scenario& s, GradientEngine expected_engine) {
  const auto outcomes = run_ddp(s);
  if (::testing::Test::HasFailure()) return;
  EXPECT_EQ(outcomes[0].engine, expected_engine);
  expect_ranks_bitwise_identical(outcomes);
  expect_matches_reference(outcomes[0].parameters, reference_parameters(s));
  expect_layout_covers_every_parameter(outcomes[0].layout, outcomes[0].parameters.size());
  EXPECT_GE(outcomes[0].layout.size(), 2u) << "small caps should give several buckets";
}

TEST(DdpGloo, ReducerTwoRanksMatchTheHandAveragedReference) {
  Scenario s;
  s.ddp = small_buckets(GradientEngine::kAuto);
  check_scenario(s, GradientEngine::kReducer);
}

TEST(DdpGloo, ReducerThreeRanksCnnMatchTheHandAveragedReference) {
  Scenario s;
  s.model = "cnn";
  s.world_size = 3;
  s.ddp = small_buckets(GradientEngine::kReducer);
  s.ddp.bucket_cap_bytes = 256 * 1024;
  check_scenario(s, GradientEngine::kReducer);
}

TEST(DdpGloo, BucketedAllreduceOneWorkerMatchesTheReference) {
  Scenario s;
  s.world_size = 3;
  s.ddp = small_buckets(GradientEngine::kBucketedAllreduce);
  check_scenario(s, GradientEngine::kBucketedAllreduce);
}

TEST(DdpGloo, TwoLocalWorkersPerRankMatchTheReference) {
  Scenario s;
  s.local_workers = 2;
  s.ddp = small_buckets(GradientEngine::kAuto);
  check_scenario(s, GradientEngine::kBucketedAllreduce);
}

TEST(DdpGloo, TwoLocalWorkersThreeRanksCnnMatchTheReference) {
  Scenario s;
  s.model = "cnn";
  s.world_size = 3;
  s.local_workers = 2;
  s.steps = 3;
  s.ddp = small_buckets(GradientEngine::kAuto);
  check_scenario(s, GradientEngine::kBucketedAllreduce);
}

std::vector<std::vector<std::size_t>> sorted_buckets(std::vector<std::vector<std::size_t>> layout) {
  for (auto& bucket : layout) std::sort(bucket.begin(), bucket.end());
  return layout;
}

TEST(DdpGloo, ReducerRebuildsIntoTheReadyOrderLayoutOfTheBucketedEngine) {
  // mlp parameters: 0 fc1.weight (784 KiB), 1 fc1.bias, 2 fc2.weight (10 KiB), 3 fc2.bias.
  // Ready order 3,2,1,0; first bucket closes at >= 8 KiB after fc2.weight.
  const std::vector<std::vector<std::size_t>> expected{{2, 3}, {0, 1}};
  for (GradientEngine engine : {GradientEngine::kReducer, GradientEngine::kBucketedAllreduce}) {
    SCOPED_TRACE(engine_name(engine));
    Scenario s;
    s.steps = 2;
    s.ddp = small_buckets(engine);
    const auto outcomes = run_ddp(s);
    EXPECT_EQ(sorted_buckets(outcomes[0].layout), expected);
  }
}

TEST(DdpGloo, TelemetryCountsEveryGradientByteAndEveryStep) {
  Scenario s;
  s.ddp = small_buckets(GradientEngine::kAuto);
  const auto outcomes = run_ddp(s);
  for (const RankOutcome& outcome : outcomes) {
    EXPECT_EQ(outcome.last_step.bytes_allreduced, 203530 * 4);
    EXPECT_EQ(outcome.last_step.buckets, 2);
    EXPECT_GT(outcome.last_step.loss, 0.0);
    EXPECT_GT(outcome.last_step.forward_ms, 0.0);
    EXPECT_GT(outcome.last_step.backward_ms, 0.0);
    EXPECT_GE(outcome.last_step.allreduce_wait_ms, 0.0);
    EXPECT_GE(outcome.last_step.optimizer_ms, 0.0);
    EXPECT_EQ(outcome.totals.steps, s.steps);
    EXPECT_EQ(outcome.totals.bytes_allreduced, int64_t{s.steps} * 203530 * 4);
  }
}

// DDP's broadcast_buffers: BatchNorm statistics are rank 0's after
// construction and at the start of every forward, which then updates them
// from the local batch. Rank 1 drifts its statistics by a large offset
// between construction and the step; after the step the ranks differ only
// by the local update (momentum 0.1 of a batch statistic), not the drift.
TEST(DdpGloo, BatchNormBuffersFollowRankZeroAtConstructionAndBeforeEachForward) {
  constexpr float kDrift = 1e4f;
  Scenario s;
  s.model = "resnet18";
  s.steps = 1;
  s.batch_size = 4;
  const auto replicas = replicas_per_rank(s);
  std::vector<std::vector<at::Tensor>> constructed(2), stepped(2), parameters(2);
  const auto errors = run_ranks(2, [&](int r, uint16_t port) {
    GlooDdp ddp(GlooGroup::connect(loopback(r, 2, port)), replicas[r]);
    constructed[r] = buffers_of(replicas[r][0]);
    if (r == 1) {
      torch::NoGradGuard no_grad;
      for (const auto& buffer : replicas[r][0].named_buffers())
        if (buffer.tensor.is_floating_point()) buffer.tensor.add_(kDrift);
    }
    ddp.train_step(batches_of_rank(s, r)[0]);
    stepped[r] = buffers_of(replicas[r][0]);
    parameters[r] = replicas[r][0].parameters();
    ddp.group().barrier();
  });
  ASSERT_EQ(errors, std::vector<std::string>(2, ""));
  ASSERT_FALSE(constructed[0].empty());
  for (std::size_t i = 0; i < constructed[0].size(); ++i) {
    EXPECT_TRUE(at::equal(constructed[1][i], constructed[0][i])) << "buffer " << i << " after construction";
    EXPECT_LT((stepped[1][i] - stepped[0][i]).abs().max().item<double>(), kDrift / 10) << "buffer " << i;
  }
  for (std::size_t i = 0; i < parameters[0].size(); ++i)
    EXPECT_TRUE(at::equal(parameters[1][i], parameters[0][i])) << "parameter " << i;
}

TEST(DdpGloo, ReducerRefusesSeveralLocalWorkersAndBatchCountsMustMatch) {
  GlooGroup group = GlooGroup::connect(loopback(0, 1, free_port()));
  std::vector<model::Model> two{model::make_model("mlp", kShape, 1), model::make_model("mlp", kShape, 1)};
  GlooDdpOptions reducer;
  reducer.engine = GradientEngine::kReducer;
  EXPECT_THROW((GlooDdp{group, two, reducer}), std::invalid_argument);
  GlooDdp ddp(group, two);
  EXPECT_EQ(ddp.engine(), GradientEngine::kBucketedAllreduce);
  EXPECT_THROW(ddp.train_step(synthetic_train().get_range(0, 8)), std::invalid_argument);
}

// One rank per process, the way the baseline really runs: the test binary
// re-executes itself as two children that run only ChildRank (which skips
// itself unless ST_C10D_CHILD_RANK is set). Each child writes its final
// parameters, flattened, to a file; the parent compares them.
at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  for (const at::Tensor& tensor : tensors) flat.push_back(tensor.detach().reshape(-1));
  return at::cat(flat);
}

TEST(DdpGlooProcesses, ChildRank) {
  const char* rank_text = std::getenv("ST_C10D_CHILD_RANK");
  if (rank_text == nullptr) GTEST_SKIP() << "runs only as a child of TwoProcessesMatchTheReference";
  const int rank = std::atoi(rank_text);
  Scenario s;
  s.ddp = small_buckets(GradientEngine::kAuto);
  const auto batches = batches_of_rank(s, rank);
  const model::Model replica = model::make_model(s.model, kShape, kInitSeed + rank);
  GlooDdp ddp(GlooGroup::connect(loopback(rank, 2, std::atoi(std::getenv("ST_C10D_CHILD_PORT")))), {replica}, s.ddp);
  for (int step = 0; step < s.steps; ++step) ddp.train_step(batches[step]);
  const at::Tensor flat = flatten(replica.parameters());
  std::ofstream(std::getenv("ST_C10D_CHILD_OUT"), std::ios::binary)
      .write(static_cast<const char*>(flat.data_ptr()), flat.numel() * sizeof(float));
  ddp.group().barrier();
}

// fork + execve of this binary; the child's output goes to `log`.
pid_t spawn_rank(int rank, uint16_t port, const std::string& out, const std::string& log) {
  std::vector<std::string> env{"ST_C10D_CHILD_RANK=" + std::to_string(rank),
                               "ST_C10D_CHILD_PORT=" + std::to_string(port), "ST_C10D_CHILD_OUT=" + out};
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  char filter[] = "--gtest_filter=DdpGlooProcesses.ChildRank";
  char* argv[] = {filter, filter, nullptr};
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until execve
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  return pid;
}

// Exit status of `pid`, or -1 after killing it when it outlives `deadline`.
int wait_or_kill(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

at::Tensor read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  at::Tensor values = at::empty({static_cast<int64_t>(in.tellg()) / 4}, at::kFloat);
  in.seekg(0).read(static_cast<char*>(values.data_ptr()), values.numel() * 4);
  return values;
}

TEST(DdpGlooProcesses, TwoProcessesMatchTheReference) {
  if (std::getenv("ST_C10D_CHILD_RANK") != nullptr) GTEST_SKIP();
  const std::string dir = ::testing::TempDir() + "c10d_test_" + std::to_string(getpid()) + "_";
  const uint16_t port = free_port();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<pid_t> children;
  for (int r = 0; r < 2; ++r)
    children.push_back(spawn_rank(r, port, dir + std::to_string(r) + ".bin", dir + std::to_string(r) + ".log"));
  std::vector<at::Tensor> results;
  for (int r = 0; r < 2; ++r) {
    const std::string out = dir + std::to_string(r) + ".bin", log = dir + std::to_string(r) + ".log";
    const int status = wait_or_kill(children[r], deadline);
    EXPECT_EQ(status, 0) << "rank " << r << " failed; output:\n"
                         << std::string(std::istreambuf_iterator<char>(std::ifstream(log).rdbuf()), {});
    if (status == 0) results.push_back(read_floats(out));
    std::remove(out.c_str());
    std::remove(log.c_str());
  }
  if (::testing::Test::HasFailure()) return;
  const at::Tensor& rank0 = results[0];
  EXPECT_TRUE(at::equal(rank0, results[1]));
  Scenario s;
  s.ddp = small_buckets(GradientEngine::kAuto);
  const at::Tensor reference = flatten(reference_parameters(s));
  ASSERT_EQ(rank0.numel(), reference.numel());
  EXPECT_LT((rank0 - reference).norm().item<double>() / reference.norm().item<double>(), 1e-5);
}

}  // namespace
}  // namespace st::c10d_ddp
