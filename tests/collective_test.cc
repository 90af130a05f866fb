// Collectives over the in-process transport: results against references
// computed in the documented order, bitwise equality across ranks, delays
// that reorder completions, and failures that must end in errors, not hangs.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "core/collective/bucketed_allreduce.h"
#include "core/collective/ring_allreduce.h"
#include "core/collective/sparse_allgather.h"
#include "core/comm/inproc_transport.h"
#include "core/compress/kernels.h"

#include "tests/inproc_cluster.h"

namespace st::collective {
namespace {

using namespace std::chrono_literals;
using comm::LinkDelay;
using compress::SparseChunk;
using compress::ValueEncoding;

using Cluster = st::fixtures::InProcCluster;

// ---------------------------------------------------------------- sparse

enum class Pattern { kOverlapping, kDisjoint, kBlocks };

SparseChunk make_chunk(Rank rank, int world, std::size_t numel, Pattern pattern, std::mt19937& random) {
  SparseChunk chunk;
  chunk.reserve(numel);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::bernoulli_distribution keep(0.3);
  const bool empty = rank % 3 == 1;  // some ranks contribute nothing
  for (std::size_t i = 0; i < numel && !empty; ++i) {
    const bool take = pattern == Pattern::kDisjoint ? (i % world == static_cast<std::size_t>(rank) && keep(random))
                      : pattern == Pattern::kBlocks ? ((i / 16) % 3 == static_cast<std::size_t>(rank) % 3 || (i / 16) % 5 == 0)
                                                    : keep(random);
    if (!take) continue;
    chunk.indices[chunk.count] = static_cast<uint32_t>(i);
    chunk.values[chunk.count++] = value(random);
  }
  return chunk;
}

float as_sent(float v, ValueEncoding encoding) {
  if (encoding == ValueEncoding::kF32) return v;
  const auto& k = compress::kernels(simd::Level::kPortable);
  uint16_t half;
  k.to_half(&v, &half, 1);
  float back;
  k.from_half(&half, &back, 1);
  return back;
}

// The documented result: per index, the values in rank order, left to right.
std::map<uint32_t, float> reference_sum(const std::vector<SparseChunk>& chunks, ValueEncoding encoding) {
  std::map<uint32_t, float> sum;
  for (const auto& chunk : chunks)
    for (std::size_t j = 0; j < chunk.count; ++j) {
      const float v = as_sent(chunk.values[j], encoding);
      auto [it, fresh] = sum.emplace(chunk.indices[j], v);
      if (!fresh) it->second += v;
    }
  return sum;
}

bool same_bits(const SparseChunk& a, const SparseChunk& b) {
  if (a.count != b.count) return false;
  return a.count == 0 || (std::memcmp(a.indices.data(), b.indices.data(), 4 * a.count) == 0 &&
                          std::memcmp(a.values.data(), b.values.data(), 4 * a.count) == 0);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), 4 * a.size()) == 0);
}

struct SparseOutcome {
  std::vector<SparseChunk> sums;
  std::vector<std::exception_ptr> errors;
  std::vector<CollectiveStats> stats;
};

SparseOutcome run_sparse(Cluster& cluster, const std::vector<SparseChunk>& chunks, std::size_t numel,
                         ValueEncoding encoding) {
  const int world = cluster.world();
  SparseOutcome out{std::vector<SparseChunk>(world), std::vector<std::exception_ptr>(world),
                    std::vector<CollectiveStats>(world)};
  std::atomic<int> finished{0};
  for (Rank r = 0; r < world; ++r)
    sparse_ring_allgather(cluster.comm(r), chunks[r].view(), numel, {encoding},
                          [&, r](std::exception_ptr error, SparseChunk&& sum, const CollectiveStats& stats) {
                            out.sums[r] = std::move(sum);
                            out.errors[r] = error;
                            out.stats[r] = stats;
                            ++finished;
                          });
  EXPECT_TRUE(cluster.wait(finished, world));
  return out;
}

void expect_sparse_correct(const SparseOutcome& out, const std::vector<SparseChunk>& chunks, ValueEncoding encoding) {
  const auto reference = reference_sum(chunks, encoding);
  for (std::size_t r = 0; r < out.sums.size(); ++r) {
    ASSERT_FALSE(out.errors[r]) << "rank " << r;
    const SparseChunk& sum = out.sums[r];
    ASSERT_EQ(sum.count, reference.size()) << "rank " << r;
    std::size_t j = 0;
    for (const auto& [index, value] : reference) {
      ASSERT_EQ(sum.indices[j], index);
      ASSERT_EQ(sum.values[j], value) << "index " << index;
      ++j;
    }
    EXPECT_TRUE(same_bits(sum, out.sums[0])) << "rank " << r;
  }
}

TEST(SparseRingAllgather, SumsInRankOrderForWorldSizesOneToEight) {
  for (int world = 1; world <= 8; ++world) {
    for (Pattern pattern : {Pattern::kOverlapping, Pattern::kDisjoint, Pattern::kBlocks}) {
      for (ValueEncoding encoding : {ValueEncoding::kF32, ValueEncoding::kF16}) {
        SCOPED_TRACE(testing::Message() << "world " << world << " pattern " << int(pattern) << " f16 " << int(encoding));
        std::mt19937 random(world * 100 + int(pattern) * 10 + int(encoding));
        const std::size_t numel = pattern == Pattern::kBlocks ? 1000 + 7 : 70001;  // odd; u32 indices for 70001
        std::vector<SparseChunk> chunks;
        for (Rank r = 0; r < world; ++r) chunks.push_back(make_chunk(r, world, numel, pattern, random));
        Cluster cluster(world);
        const auto out = run_sparse(cluster, chunks, numel, encoding);
        expect_sparse_correct(out, chunks, encoding);
      }
    }
  }
}

TEST(SparseRingAllgather, DenseVariantAccumulatesInRankOrder) {
  const int world = 5;
  const std::size_t numel = 333;
  std::mt19937 random(7);
  std::vector<SparseChunk> chunks;
  for (Rank r = 0; r < world; ++r) chunks.push_back(make_chunk(r, world, numel, Pattern::kOverlapping, random));
  std::vector<float> expected(numel, 0.5f);
  for (const auto& chunk : chunks)
    for (std::size_t j = 0; j < chunk.count; ++j) expected[chunk.indices[j]] += chunk.values[j];
  std::vector<std::vector<float>> buffers(world, std::vector<float>(numel, 0.5f));
  Cluster cluster(world);
  std::atomic<int> finished{0}, failures{0};
  for (Rank r = 0; r < world; ++r)
    sparse_ring_allgather_dense(cluster.comm(r), chunks[r].view(), numel, buffers[r].data(), {},
                                [&](std::exception_ptr error, const CollectiveStats&) {
                                  failures += error != nullptr;
                                  ++finished;
                                });
  ASSERT_TRUE(cluster.wait(finished, world));
  EXPECT_EQ(failures.load(), 0);
  for (Rank r = 0; r < world; ++r) EXPECT_TRUE(same_bits(buffers[r], expected));
}

TEST(SparseRingAllgather, ReportsTrafficAndSendsOutOfRangeHalvesAsF32) {
  const int world = 3;
  const std::size_t numel = 100;
  std::vector<SparseChunk> chunks(world);
  for (Rank r = 0; r < world; ++r) {
    chunks[r].reserve(2);
    chunks[r].indices = {static_cast<uint32_t>(r), 50};
    chunks[r].values = {1e5f * (r + 1), 0.1f};  // 1e5 is beyond f16
    chunks[r].count = 2;
  }
  Cluster cluster(world);
  const auto out = run_sparse(cluster, chunks, numel, ValueEncoding::kF16);
  for (Rank r = 0; r < world; ++r) {
    ASSERT_FALSE(out.errors[r]);
    EXPECT_EQ(out.sums[r].values[r], 1e5f * (r + 1));  // exact: travelled as f32
    // Two chunks of 4 + 16 + 2*2 (u16 indices) + 2*4 (f32 values) bytes.
    EXPECT_EQ(out.stats[r].messages_sent, 2u);
    EXPECT_EQ(out.stats[r].bytes_sent, 2u * 32);
    EXPECT_EQ(out.stats[r].bytes_received, 2u * 32);
  }
}

TEST(SparseRingAllgather, SendsWholeBlocksAsBlock16) {
  std::vector<SparseChunk> chunks(2);
  for (uint32_t i = 16; i < 48; ++i) {  // blocks 1 and 2 of a 100-element tensor
    chunks[0].indices.push_back(i);
    chunks[0].values.push_back(0.25f * i);
  }
  chunks[0].count = 32;
  Cluster cluster(2);
  const auto out = run_sparse(cluster, chunks, 100, ValueEncoding::kF32);
  expect_sparse_correct(out, chunks, ValueEncoding::kF32);
  // 4 (collective header) + 16 (wire header) + 4 + 2 * 4 (block ids) + 32 * 4 (values);
  // u16 indices would need 4 + 16 + 32 * 2 + 32 * 4 = 212.
  EXPECT_EQ(out.stats[0].bytes_sent, 160u);
  EXPECT_EQ(out.stats[1].bytes_received, 160u);
}

TEST(SparseRingAllgather, ABadContributionFailsEveryRank) {
  const int world = 4;
  std::mt19937 random(3);
  std::vector<SparseChunk> chunks;
  for (Rank r = 0; r < world; ++r) chunks.push_back(make_chunk(r, world, 64, Pattern::kBlocks, random));
  chunks[2].values[0] = std::numeric_limits<float>::quiet_NaN();
  Cluster cluster(world);
  const auto out = run_sparse(cluster, chunks, 64, ValueEncoding::kF32);
  for (Rank r = 0; r < world; ++r) {
    ASSERT_TRUE(out.errors[r]) << "rank " << r;
    try {
      std::rethrow_exception(out.errors[r]);
    } catch (const CollectiveError& e) {
      // Rank 2 fails locally; the others name it as the first failure.
      const std::string expected = r == 2 ? "sparse allgather: value at position 0 is not finite"
                                          : "first failure: rank 2: sparse allgather: value at position 0";
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

// ---------------------------------------------------------------- dense

// Chunk c is summed from rank c around the ring, left to right.
std::vector<float> reference_allreduce(const std::vector<std::vector<float>>& inputs, bool average) {
  const int world = static_cast<int>(inputs.size());
  const std::size_t n = inputs[0].size();
  std::vector<float> out(n);
  for (int c = 0; c < world; ++c)
    for (std::size_t i = ring_chunk_begin(n, world, c); i < ring_chunk_begin(n, world, c + 1); ++i) {
      float sum = inputs[c][i];
      for (int k = 1; k < world; ++k) sum = sum + inputs[(c + k) % world][i];
      out[i] = average ? sum / static_cast<float>(world) : sum;
    }
  return out;
}

std::vector<std::vector<float>> random_inputs(int world, std::size_t n, std::mt19937& random) {
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<std::vector<float>> inputs(world, std::vector<float>(n));
  for (auto& input : inputs)
    for (auto& v : input) v = value(random);
  return inputs;
}

std::vector<std::exception_ptr> run_dense(Cluster& cluster, std::vector<std::vector<float>>& buffers,
                                          AllreduceOptions options, std::chrono::seconds limit = 10s) {
  std::vector<std::exception_ptr> errors(cluster.world());
  std::atomic<int> finished{0};
  for (Rank r = 0; r < cluster.world(); ++r)
    ring_allreduce(cluster.comm(r), buffers[r].data(), buffers[r].size(), options,
                   [&, r](std::exception_ptr error, const CollectiveStats&) {
                     errors[r] = error;
                     ++finished;
                   });
  EXPECT_TRUE(cluster.wait(finished, cluster.world(), limit));
  return errors;
}

TEST(RingAllreduce, MatchesTheFixedOrderSumOnEveryRank) {
  for (int world = 1; world <= 8; ++world) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t(world - 1), std::size_t{7}, std::size_t{1001}}) {
      for (bool average : {false, true}) {
        SCOPED_TRACE(testing::Message() << "world " << world << " n " << n << " average " << average);
        std::mt19937 random(world * 1000 + n);
        auto buffers = random_inputs(world, n, random);
        const auto expected = reference_allreduce(buffers, average);
        Cluster cluster(world);
        const auto errors = run_dense(cluster, buffers, {average});
        for (Rank r = 0; r < world; ++r) {
          ASSERT_FALSE(errors[r]);
          EXPECT_TRUE(same_bits(buffers[r], expected)) << "rank " << r;
        }
      }
    }
  }
}

TEST(RingAllreduce, MismatchedSizesFailEveryRank) {
  Cluster cluster(3);
  std::vector<std::vector<float>> buffers{std::vector<float>(30), std::vector<float>(31), std::vector<float>(30)};
  for (auto error : run_dense(cluster, buffers, {})) EXPECT_TRUE(error);
}

// ---------------------------------------------------------------- delays

TEST(Collectives, ConcurrentCollectivesSurviveJitterThatReordersCompletions) {
  const int world = 5;
  Cluster cluster(world, LinkDelay{1ms, 50e6, 4ms}, 11);
  cluster.fabric().set_link_delay(2, 3, LinkDelay{6ms, 5e6, 2ms});  // one slow link
  std::mt19937 random(5);
  auto dense = random_inputs(world, 20'000, random);
  const auto dense_expected = reference_allreduce(dense, false);
  std::vector<SparseChunk> chunks;
  for (Rank r = 0; r < world; ++r) chunks.push_back(make_chunk(r, world, 5000, Pattern::kOverlapping, random));
  std::vector<SparseChunk> sums(world);
  std::atomic<int> finished{0}, failures{0};
  // Every rank starts both, in the same order, so the ids match.
  for (Rank r = 0; r < world; ++r) {
    ring_allreduce(cluster.comm(r), dense[r].data(), dense[r].size(), {}, [&](std::exception_ptr e, const CollectiveStats&) {
      failures += e != nullptr;
      ++finished;
    });
    sparse_ring_allgather(cluster.comm(r), chunks[r].view(), 5000, {ValueEncoding::kF16},
                          [&, r](std::exception_ptr e, SparseChunk&& sum, const CollectiveStats&) {
                            sums[r] = std::move(sum);
                            failures += e != nullptr;
                            ++finished;
                          });
  }
  ASSERT_TRUE(cluster.wait(finished, 2 * world));
  ASSERT_EQ(failures.load(), 0);
  for (Rank r = 0; r < world; ++r) EXPECT_TRUE(same_bits(dense[r], dense_expected));
  expect_sparse_correct(SparseOutcome{sums, std::vector<std::exception_ptr>(world), {}}, chunks, ValueEncoding::kF16);
}

// ---------------------------------------------------------------- bucketed

TEST(BucketPlanning, FillsInOrderAndClosesAtTheCap) {
  BucketOptions options{4096, 1024};  // bytes: first bucket 256 floats, then 1024
  const auto plan = plan_buckets({100, 200, 50, 1000, 30, 2000, 10}, options);
  ASSERT_EQ(plan.buckets.size(), 4u);
  EXPECT_EQ(plan.buckets[0].tensors, (std::vector<std::size_t>{0, 1}));     // 300 floats >= 256
  EXPECT_EQ(plan.buckets[1].tensors, (std::vector<std::size_t>{2, 3}));     // 1050 >= 1024
  EXPECT_EQ(plan.buckets[2].tensors, (std::vector<std::size_t>{4, 5}));     // 2030
  EXPECT_EQ(plan.buckets[3].tensors, (std::vector<std::size_t>{6}));
  EXPECT_EQ(plan.offset_of[5], 30u);
  EXPECT_EQ(plan.bucket_of[6], 3u);
}

TEST(BucketedAllreduce, AveragesEveryBucketWhateverTheReadyOrder) {
  const int world = 4;
  const std::vector<std::size_t> sizes{300, 5, 1000, 17, 4096, 2, 777, 0, 1500, 33};
  const auto plan = plan_buckets(sizes, BucketOptions{4096, 1024});
  ASSERT_GE(plan.buckets.size(), 4u);
  Cluster cluster(world, LinkDelay{20ms, 0, 2ms}, 9);  // slow enough for all buckets to be in flight together
  std::mt19937 random(17);
  // tensors[r][t]: rank r's gradient t.
  std::vector<std::vector<std::vector<float>>> tensors(world);
  for (Rank r = 0; r < world; ++r)
    for (std::size_t size : sizes) tensors[r].push_back(random_inputs(1, size, random)[0]);
  // The expected result, bucket by bucket, from the flat bucket contents.
  std::vector<std::vector<float>> expected(sizes.size());
  for (const auto& bucket : plan.buckets) {
    std::vector<std::vector<float>> flat(world);
    for (Rank r = 0; r < world; ++r)
      for (std::size_t t : bucket.tensors) flat[r].insert(flat[r].end(), tensors[r][t].begin(), tensors[r][t].end());
    const auto reduced = reference_allreduce(flat, true);
    for (std::size_t k = 0; k < bucket.tensors.size(); ++k)
      expected[bucket.tensors[k]].assign(reduced.begin() + bucket.offsets[k],
                                         reduced.begin() + bucket.offsets[k] + sizes[bucket.tensors[k]]);
  }
  std::atomic<int> finished{0}, failures{0};
  std::vector<std::unique_ptr<BucketedAllreduce>> reducers;
  for (Rank r = 0; r < world; ++r)
    reducers.push_back(std::make_unique<BucketedAllreduce>(
        cluster.comm(r), plan, AllreduceOptions{true}, [&](std::exception_ptr e, const CollectiveStats& stats) {
          failures += e != nullptr;
          EXPECT_GT(stats.bytes_sent, 0u);
          ++finished;
        }));
  for (Rank r = 0; r < world; ++r) {
    std::vector<std::size_t> order(sizes.size());
    for (std::size_t t = 0; t < order.size(); ++t) order[t] = t;
    std::shuffle(order.begin(), order.end(), random);  // each rank its own order
    for (std::size_t t : order) reducers[r]->mark_ready(t, tensors[r][t].data());
  }
  for (Rank r = 0; r < world; ++r) EXPECT_EQ(reducers[r]->buckets_started(), plan.buckets.size());
  EXPECT_EQ(finished.load(), 0);  // every bucket was started before any completed
  EXPECT_THROW(reducers[0]->mark_ready(0, tensors[0][0].data()), std::invalid_argument);
  ASSERT_TRUE(cluster.wait(finished, world));
  EXPECT_EQ(failures.load(), 0);
  for (Rank r = 0; r < world; ++r)
    for (std::size_t t = 0; t < sizes.size(); ++t)
      EXPECT_TRUE(same_bits(tensors[r][t], expected[t])) << "rank " << r << " tensor " << t;
}

// ---------------------------------------------------------------- failures

TEST(Collectives, APeerFailureMidCollectiveEndsEveryRankWithAnError) {
  const int world = 5;
  Cluster cluster(world, LinkDelay{10ms, 0, 0ms});  // 8 steps of 10 ms: ~80 ms in all
  std::mt19937 random(1);
  auto dense = random_inputs(world, 1000, random);
  std::vector<SparseChunk> chunks;
  for (Rank r = 0; r < world; ++r) chunks.push_back(make_chunk(r, world, 1000, Pattern::kOverlapping, random));
  std::atomic<int> finished{0}, failures{0};
  for (Rank r = 0; r < world; ++r) {
    ring_allreduce(cluster.comm(r), dense[r].data(), 1000, {}, [&](std::exception_ptr e, const CollectiveStats&) {
      failures += e != nullptr;
      ++finished;
    });
    sparse_ring_allgather(cluster.comm(r), chunks[r].view(), 1000, {},
                          [&](std::exception_ptr e, SparseChunk&&, const CollectiveStats&) {
                            failures += e != nullptr;
                            ++finished;
                          });
  }
  // A bucketed allreduce whose last bucket never becomes ready on rank 0.
  const auto plan = plan_buckets({100, 100, 100}, BucketOptions{400, 400});
  ASSERT_EQ(plan.buckets.size(), 3u);
  std::vector<std::vector<float>> grads(world, std::vector<float>(300, 1.0f));
  std::vector<std::unique_ptr<BucketedAllreduce>> reducers;
  for (Rank r = 0; r < world; ++r) {
    reducers.push_back(std::make_unique<BucketedAllreduce>(cluster.comm(r), plan, AllreduceOptions{},
                                                           [&](std::exception_ptr e, const CollectiveStats&) {
                                                             failures += e != nullptr;
                                                             ++finished;
                                                           }));
    for (std::size_t t = 0; t < (r == 0 ? 2u : 3u); ++t) reducers[r]->mark_ready(t, grads[r].data() + 100 * t);
  }
  std::this_thread::sleep_for(25ms);
  cluster.fabric().fail(3);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(cluster.wait(finished, 3 * world, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(failures.load(), 3 * world);
  // A collective started on a broken communicator fails at once.
  std::atomic<int> late{0};
  std::exception_ptr late_error;
  ring_allreduce(cluster.comm(1), dense[1].data(), 1000, {}, [&](std::exception_ptr e, const CollectiveStats&) {
    late_error = e;
    ++late;
  });
  ASSERT_TRUE(cluster.wait(late, 1, 5s));
  try {
    std::rethrow_exception(late_error);
  } catch (const comm::TransportError& e) {
    EXPECT_EQ(e.peer(), 3);
  }
}

}  // namespace
}  // namespace st::collective
