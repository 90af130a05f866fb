// The pieces of ddp-fp16 and ddp-powersgd: the ring allreduce with halves on
// the wire, the fp16 hook's buckets against ddp's on gradients that halves
// represent exactly, and PowerSGD's algebra (full rank, error feedback,
// warm start, which layers it compresses). Training runs are in
// ddp_hooks_train_test.cc.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "core/collective/bucketed_allreduce.h"
#include "core/collective/ring_allreduce.h"
#include "core/comm/inproc_transport.h"
#include "core/train/systems/sync/ddp_hook_systems.h"
#include "core/train/systems/sync/powersgd.h"

#include "tests/inproc_cluster.h"

namespace st {
namespace {

using namespace std::chrono_literals;
using collective::AllreduceOptions;
using collective::CollectiveStats;
using collective::Communicator;
using comm::Rank;

using Cluster = st::fixtures::InProcCluster;

float to_half(float v) { return static_cast<float>(Eigen::half(v)); }

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
}

// Ring allreduce on every rank; returns rank 0's stats.
CollectiveStats run_ring(Cluster& cluster, std::vector<std::vector<float>>& buffers, AllreduceOptions options) {
  std::atomic<int> finished{0};
  std::vector<CollectiveStats> stats(cluster.world());
  for (Rank r = 0; r < cluster.world(); ++r)
    collective::ring_allreduce(cluster.comm(r), buffers[r].data(), buffers[r].size(), options,
                               [&, r](std::exception_ptr error, const CollectiveStats& s) {
                                 EXPECT_FALSE(error);
                                 stats[r] = s;
                                 ++finished;
                               });
  EXPECT_TRUE(cluster.wait(finished, cluster.world()));
  return stats[0];
}

// The documented fp16 result: inputs as halves, chunk c summed from rank c
// around the ring, each partial sum rounded to half.
std::vector<float> reference_fp16_allreduce(const std::vector<std::vector<float>>& inputs, bool average) {
  const int world = static_cast<int>(inputs.size());
  const std::size_t n = inputs[0].size();
  std::vector<float> out(n);
  for (int c = 0; c < world; ++c)
    for (std::size_t i = collective::ring_chunk_begin(n, world, c); i < collective::ring_chunk_begin(n, world, c + 1);
         ++i) {
      float sum = to_half(inputs[c][i]);
      for (int k = 1; k < world; ++k) sum = to_half(sum + to_half(inputs[(c + k) % world][i]));
      out[i] = average ? to_half(sum / static_cast<float>(world)) : sum;
    }
  return out;
}

TEST(RingAllreduceFp16, EveryRankEndsWithTheHalfRoundedSumBitwise) {
  for (int world = 1; world <= 5; ++world)
    for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{1001}})
      for (bool average : {false, true}) {
        SCOPED_TRACE(testing::Message() << "world " << world << " n " << n << " average " << average);
        std::mt19937 random(world * 7 + n);
        std::uniform_real_distribution<float> value(-3.0f, 3.0f);
        std::vector<std::vector<float>> buffers(world, std::vector<float>(n));
        for (auto& b : buffers)
          for (auto& v : b) v = value(random);
        const auto expected = reference_fp16_allreduce(buffers, average);
        Cluster cluster(world);
        AllreduceOptions options;
        options.average = average;
        options.fp16_wire = true;
        run_ring(cluster, buffers, options);
        for (Rank r = 0; r < world; ++r) EXPECT_TRUE(same_bits(buffers[r], expected)) << "rank " << r;
      }
}

TEST(RingAllreduceFp16, SendsHalfTheBytesOfTheFp32Ring) {
  constexpr int kWorld = 4;
  constexpr std::size_t kN = 100000;
  std::vector<std::vector<float>> fp32(kWorld, std::vector<float>(kN, 0.5f)), fp16 = fp32;
  Cluster a(kWorld), b(kWorld);
  const auto full = run_ring(a, fp32, {});
  AllreduceOptions half;
  half.fp16_wire = true;
  const auto halved = run_ring(b, fp16, half);
  ASSERT_EQ(full.messages_sent, halved.messages_sent);
  // Every message keeps its 4-byte header; the bodies halve exactly.
  const uint64_t headers = 4 * full.messages_sent;
  EXPECT_EQ(halved.bytes_sent - headers, (full.bytes_sent - headers) / 2);
  EXPECT_EQ(halved.bytes_received - headers, (full.bytes_received - headers) / 2);
  EXPECT_NEAR(static_cast<double>(halved.bytes_sent) / full.bytes_sent, 0.5, 1e-3);
}

// ddp's reduce (fp32 buckets, the step's x 1/workers) against ddp-fp16's
// (the fp16 hook's buckets), on gradients that are small multiples of 2^-8:
// halves hold them exactly, dividing by a power-of-two worker count is
// exact, and so is every partial sum, so the two must agree bitwise.
TEST(Fp16CompressHook, EqualsDdpBitwiseOnExactlyRepresentableGradients) {
  for (int nodes : {2, 4})
    for (int gpus_per_node : {1, 2}) {
      SCOPED_TRACE(testing::Message() << nodes << " nodes x " << gpus_per_node << " workers");
      train::TrainConfig config;
      config.nodes = nodes;
      config.gpus_per_node = gpus_per_node;
      // Several buckets (small caps), tensors in backward order.
      const std::vector<std::size_t> numels{10, 3000, 7, 50000, 1, 64};
      collective::BucketOptions caps;
      caps.first_bucket_cap_bytes = 4096;
      caps.bucket_cap_bytes = 100000;
      const auto plan = collective::plan_buckets(numels, caps);
      ASSERT_GE(plan.buckets.size(), 3u);
      std::mt19937 random(nodes * 10 + gpus_per_node);
      std::uniform_int_distribution<int> multiple(-64, 64);
      // grads[rank][tensor]
      std::vector<std::vector<std::vector<float>>> ddp(nodes);
      for (auto& rank : ddp)
        for (std::size_t n : numels) {
          rank.emplace_back(n);
          for (auto& v : rank.back()) v = static_cast<float>(multiple(random)) * (1.0f / 256);
        }
      auto fp16 = ddp;
      auto run = [&](std::vector<std::vector<std::vector<float>>>& grads, AllreduceOptions options) {
        Cluster cluster(nodes);
        std::atomic<int> finished{0};
        std::vector<CollectiveStats> stats(nodes);
        std::vector<std::unique_ptr<collective::BucketedAllreduce>> allreduces;
        for (Rank r = 0; r < nodes; ++r)
          allreduces.push_back(std::make_unique<collective::BucketedAllreduce>(
              cluster.comm(r), plan, options, [&, r](std::exception_ptr error, const CollectiveStats& s) {
                EXPECT_FALSE(error);
                stats[r] = s;
                ++finished;
              }));
        for (Rank r = 0; r < nodes; ++r)
          for (std::size_t t = 0; t < numels.size(); ++t) allreduces[r]->mark_ready(t, grads[r][t].data());
        EXPECT_TRUE(cluster.wait(finished, nodes));
        return stats[0];
      };
      const auto ddp_stats = run(ddp, {});
      const auto fp16_stats = run(fp16, train::fp16_compress_hook_options(config));
      const float scale = 1.0f / static_cast<float>(nodes * gpus_per_node);  // SyncSystem's step
      for (Rank r = 0; r < nodes; ++r)
        for (std::size_t t = 0; t < numels.size(); ++t) {
          for (auto& v : ddp[r][t]) v *= scale;
          EXPECT_TRUE(same_bits(ddp[r][t], fp16[r][t])) << "rank " << r << " tensor " << t;
        }
      EXPECT_NEAR(static_cast<double>(fp16_stats.bytes_sent) / ddp_stats.bytes_sent, 0.5, 0.01);
    }
}

// ------------------------------------------------------------- PowerSGD

using Grads = std::vector<std::vector<float>>;

Grads random_grads(const std::vector<std::vector<int64_t>>& shapes, std::mt19937& random) {
  std::normal_distribution<float> value(0.0f, 1.0f);
  Grads grads;
  for (const auto& shape : shapes) {
    std::size_t n = 1;
    for (auto d : shape) n *= static_cast<std::size_t>(d);
    grads.emplace_back(n);
    for (auto& v : grads.back()) v = value(random);
  }
  return grads;
}

// One PowerSGD iteration over `nodes`, the allreduces done by hand (sums).
void powersgd_iteration(std::vector<train::PowerSgd>& nodes, std::vector<Grads>& grads) {
  auto allreduce = [&](std::vector<float>& (train::PowerSgd::*buffer)()) {
    std::vector<float> sum(((nodes[0]).*buffer)().size(), 0.0f);
    for (auto& node : nodes)
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += (node.*buffer)()[i];
    for (auto& node : nodes) (node.*buffer)() = sum;
  };
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n].compute_p(grads[n]);
  allreduce(&train::PowerSgd::p);
  allreduce(&train::PowerSgd::uncompressed);
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n].compute_q(grads[n]);
  allreduce(&train::PowerSgd::q);
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n].decompress(grads[n], 1, static_cast<int>(nodes.size()));
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    norm += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(diff / norm);
}

TEST(PowerSgd, CompressesOnlyMatricesWhereTheFactorsAreSmaller) {
  train::PowerSgdOptions options;
  options.rank = 4;
  train::PowerSgd powersgd({{64, 32, 3, 3}, {64}, {10, 128}, {8, 8}, {4, 1000}, {128, 3136}}, options);
  EXPECT_TRUE(powersgd.compressed(0));   // 64 x 288: (64 + 288) 4 x 2 < 64 x 288
  EXPECT_FALSE(powersgd.compressed(1));  // a bias
  EXPECT_TRUE(powersgd.compressed(2));   // 10 x 128: 1104 < 1280
  EXPECT_FALSE(powersgd.compressed(3));  // 8 x 8: 128 >= 64
  EXPECT_FALSE(powersgd.compressed(4));  // rank min(4, 4) = 4: 8032 >= 4000
  EXPECT_TRUE(powersgd.compressed(5));
  EXPECT_EQ(powersgd.cols(0), 288u);
  EXPECT_EQ(powersgd.layer_rank(4), 4u);
  EXPECT_EQ(powersgd.p().size(), (64 + 10 + 128) * 4u);
  EXPECT_EQ(powersgd.q().size(), (288 + 128 + 3136) * 4u);
  EXPECT_EQ(powersgd.uncompressed().size(), 64u + 64 + 4000);
}

TEST(PowerSgd, FullRankRecoversTheSummedGradient) {
  const std::vector<std::vector<int64_t>> shapes{{12, 5}, {6, 2, 3}, {7}, {4, 9}};
  train::PowerSgdOptions options;
  options.rank = 9;                  // >= min(rows, cols) of every matrix
  options.min_compression_rate = 0;  // compress them anyway (they would not save bytes)
  options.seed = 3;
  for (int world : {1, 3}) {
    SCOPED_TRACE(testing::Message() << "world " << world);
    std::mt19937 random(world);
    std::vector<train::PowerSgd> nodes(world, train::PowerSgd(shapes, options));
    std::vector<Grads> grads;
    for (int n = 0; n < world; ++n) grads.push_back(random_grads(shapes, random));
    Grads sum = grads[0];
    for (int n = 1; n < world; ++n)
      for (std::size_t l = 0; l < sum.size(); ++l)
        for (std::size_t i = 0; i < sum[l].size(); ++i) sum[l][i] += grads[n][l][i];
    for (int iteration = 0; iteration < 2; ++iteration) {  // the warm-started one too
      auto in = grads;
      powersgd_iteration(nodes, in);
      for (int n = 0; n < world; ++n)
        for (std::size_t l = 0; l < shapes.size(); ++l) {
          EXPECT_EQ(nodes[n].compressed(l), shapes[l].size() > 1) << "layer " << l;
          EXPECT_LT(relative_difference(in[n][l], sum[l]), 1e-5) << "node " << n << " layer " << l;
        }
    }
  }
}

TEST(PowerSgd, ErrorFeedbackKeepsTheSumOfGradients) {
  // What was sent over all iterations plus what is still owed equals the
  // sum of the gradients: world x (sum of approximations) / world + error.
  const std::vector<std::vector<int64_t>> shapes{{40, 30}, {30}, {16, 8, 3, 3}};
  train::PowerSgdOptions options;
  options.rank = 1;
  for (int world : {1, 2}) {
    SCOPED_TRACE(testing::Message() << "world " << world);
    std::mt19937 random(11);
    std::vector<train::PowerSgd> nodes(world, train::PowerSgd(shapes, options));
    ASSERT_TRUE(nodes[0].compressed(0) && nodes[0].compressed(2));
    std::vector<Grads> total_in(world), total_sent(world);
    for (int iteration = 0; iteration < 6; ++iteration) {
      std::vector<Grads> grads;
      for (int n = 0; n < world; ++n) grads.push_back(random_grads(shapes, random));
      auto out = grads;
      powersgd_iteration(nodes, out);
      for (int n = 0; n < world; ++n) {
        if (iteration == 0) {
          total_in[n] = grads[n];
          total_sent[n] = out[n];
          for (auto& layer : total_sent[n])
            for (auto& v : layer) v /= static_cast<float>(world);
          continue;
        }
        for (std::size_t l = 0; l < shapes.size(); ++l)
          for (std::size_t i = 0; i < grads[n][l].size(); ++i) {
            total_in[n][l][i] += grads[n][l][i];
            total_sent[n][l][i] += out[n][l][i] / static_cast<float>(world);
          }
      }
    }
    for (int n = 0; n < world; ++n)
      for (std::size_t l : {std::size_t{0}, std::size_t{2}}) {
        auto accounted = total_sent[n][l];
        for (std::size_t i = 0; i < accounted.size(); ++i) accounted[i] += nodes[n].error(l)[i];
        EXPECT_LT(relative_difference(accounted, total_in[n][l]), 1e-5) << "node " << n << " layer " << l;
        EXPECT_GT(relative_difference(total_sent[n][l], total_in[n][l]), 0.1) << "rank 1 leaves an error";
      }
  }
}

TEST(PowerSgd, WarmStartCarriesQAcrossIterationsAndConverges) {
  // A fixed matrix with a decaying spectrum and no error feedback: with warm
  // start every iteration is one more power-iteration step, so the rank-1
  // approximation approaches the top singular pair; fresh draws do not.
  const std::vector<std::vector<int64_t>> shapes{{48, 40}};
  std::mt19937 random(5);
  const Grads fixed = random_grads(shapes, random);
  Grads matrix{std::vector<float>(48 * 40, 0.0f)};
  for (int k = 0; k < 5; ++k) {  // sum of outer products u_k v_k^T / 2^k
    const auto u = random_grads({{48}}, random)[0], v = random_grads({{40}}, random)[0];
    for (int i = 0; i < 48; ++i)
      for (int j = 0; j < 40; ++j) matrix[0][i * 40 + j] += u[i] * v[j] / static_cast<float>(1 << k) + 0.01f * fixed[0][i * 40 + j];
  }
  auto errors = [&](bool warm_start, std::vector<std::vector<float>>* qs) {
    train::PowerSgdOptions options;
    options.rank = 1;
    options.error_feedback = false;
    options.warm_start = warm_start;
    std::vector<train::PowerSgd> node(1, train::PowerSgd(shapes, options));
    std::vector<double> out;
    for (int iteration = 0; iteration < 6; ++iteration) {
      std::vector<Grads> grads{matrix};
      powersgd_iteration(node, grads);
      out.push_back(relative_difference(grads[0][0], matrix[0]));
      if (qs) qs->push_back(node[0].q());
    }
    return out;
  };
  std::vector<std::vector<float>> qs;
  const auto warm = errors(true, &qs);
  const auto cold = errors(false, nullptr);
  // The best rank-1 approximation leaves the other singular values.
  const Eigen::Map<const Eigen::Matrix<float, 48, 40, Eigen::RowMajor>> m(matrix[0].data());
  const Eigen::VectorXd s = Eigen::JacobiSVD<Eigen::MatrixXd>(m.cast<double>()).singularValues();
  const double best = std::sqrt(1 - s(0) * s(0) / s.squaredNorm());
  EXPECT_FALSE(same_bits(qs[0], qs[1])) << "Q moves between iterations";
  EXPECT_LT(warm.back(), warm.front()) << "warm start refines the approximation";
  EXPECT_NEAR(warm.back(), best, 0.01 * best) << "and reaches the best rank-1 approximation";
  EXPECT_GT(cold.back(), warm.back() + 0.01 * best) << "fresh draws each iteration stay one power step away";
}

}  // namespace
}  // namespace st
