// Sampled CPU stages, piece by piece (core/train/node/layer_sampling.h):
// which layers are sampled and how large, how a task on a sample is priced
// (SampledCostExecutor), how buckets form over samples, what a sampled
// message stands for on the wire, and that a real transport refuses one.
// The end-to-end check against full-size stages is tests/sim_sampled_stages_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/collective/bucketed_allreduce.h"
#include "core/collective/wire_scale.h"
#include "core/comm/inproc_transport.h"
#include "core/data/dataset.h"
#include "core/data/synthetic.h"
#include "core/runtime/executor.h"
#include "core/train/node/layer_sampling.h"
#include "core/train/node/synthetic_gradients.h"
#include "core/train/run/sampled_cost_executor.h"

namespace st::train {
namespace {

TEST(LayerSampling, KeepsSmallLayersWholeAndSamplesLargeOnesInWholeBlocks) {
  const LayerSampling s({64, 4096, 5000, 1u << 20, 3000000}, {1.0 / 32, 4096});
  EXPECT_TRUE(s.sampled());
  // At or below the floor: whole. Above it: the share, at least the floor,
  // in whole blocks of 16, never more than the layer.
  EXPECT_EQ(s.numels(), (std::vector<std::size_t>{64, 4096, 4096, 32768, 93760}));
  EXPECT_DOUBLE_EQ(s.scale(0), 1.0);
  EXPECT_DOUBLE_EQ(s.scale(3), 32.0);
  EXPECT_DOUBLE_EQ(s.scale(2), 5000.0 / 4096.0);
  const double full = 64 + 4096 + 5000 + (1u << 20) + 3000000;
  const double sampled = 64 + 4096 + 4096 + 32768 + 93760;
  EXPECT_DOUBLE_EQ(s.total_scale(), full / sampled);
  for (std::size_t l = 0; l < s.layers(); ++l) EXPECT_EQ(s.numels()[l] % 16 == 0 || s.numels()[l] == s.full_numels()[l], true);
}

TEST(LayerSampling, DisabledOrWholeIsTheIdentity) {
  const LayerSampling off({100, 1u << 20}, {});
  EXPECT_FALSE(off.sampled());
  EXPECT_EQ(off.numels(), off.full_numels());
  EXPECT_DOUBLE_EQ(off.total_scale(), 1.0);
  const LayerSampling all({1u << 20}, {1.0, 4096});
  EXPECT_FALSE(all.sampled());
  EXPECT_THROW(LayerSampling({10}, {1.5, 4096}), std::invalid_argument);
  EXPECT_THROW(LayerSampling({10}, {0.5, 8}), std::invalid_argument);
}

// An executor that records what it was asked to charge.
class RecordingExecutor final : public runtime::Executor {
 public:
  runtime::Nanos now() const override { return runtime::Nanos(0); }
  void post(runtime::Task task) override { task(); }
  void post_after(runtime::Nanos, runtime::Task task) override { task(); }
  void compute(runtime::Task work, runtime::ComputeCost cost, runtime::Task done) override {
    charged.push_back(cost);
    work();
    done();
  }
  void post_progress(int, runtime::Task task) override { task(); }
  void run_until(const std::function<bool()>&) override {}
  int workers() const override { return 1; }
  std::vector<runtime::ComputeCost> charged;
};

TEST(SampledCostExecutor, ChargesEachTaskAsTheFullLayersWouldCost) {
  RecordingExecutor inner;
  const LayerSampling sampling({1000, 1u << 20}, {1.0 / 64, 1024});
  SampledCostExecutor executor(inner, sampling);
  using runtime::TaskKind;
  bool ran = false;
  executor.compute([&] { ran = true; }, {TaskKind::kCompress, 1, 16384, 0, -1, 0.05}, [] {});
  executor.compute([] {}, {TaskKind::kOptimize, 1, 100, 0, -1}, [] {});
  executor.compute([] {}, {TaskKind::kGather, 0, 1000, 0, -1}, [] {});
  executor.compute([] {}, {TaskKind::kLoad, -1, 1000 + 16384, 0, 2}, [] {});
  executor.compute([] {}, {TaskKind::kBackward, -1, 72, 0, 1}, [] {});
  executor.compute([] {}, {TaskKind::kForward, 1, 72, 0, 1}, [] {});
  ASSERT_TRUE(ran);
  ASSERT_EQ(inner.charged.size(), 6u);
  EXPECT_DOUBLE_EQ(inner.charged[0].work, 1u << 20);  // the whole layer scanned
  EXPECT_DOUBLE_EQ(inner.charged[0].density, 0.05);   // at the density it kept
  EXPECT_DOUBLE_EQ(inner.charged[1].work, 6400);      // indices, scaled like the layer
  EXPECT_DOUBLE_EQ(inner.charged[2].work, 1000);      // a whole layer as it was
  EXPECT_DOUBLE_EQ(inner.charged[3].work, 1000 + (1u << 20));  // every layer, whole
  EXPECT_EQ(inner.charged[3].device, 2);
  EXPECT_DOUBLE_EQ(inner.charged[4].work, 72);  // samples of a batch are not layer elements
  EXPECT_DOUBLE_EQ(inner.charged[5].work, 72);
  EXPECT_THROW(executor.compute([] {}, {TaskKind::kGather, 2, 10, 0, -1}, [] {}), std::logic_error);
}

TEST(SampledBuckets, FormAsTheFullTensorsWouldAndSendTheirSize) {
  // Full sizes in MB: 0.5 + 0.75 close the 1 MiB first bucket; then 20 + 10
  // close a 25 MiB one; 4 is left. Samples are a 32nd (whole small ones).
  const std::size_t mb = (1u << 20) / 4;  // floats per MiB
  const std::vector<std::size_t> full{mb / 2, mb * 3 / 4, 20 * mb, 10 * mb, 4 * mb};
  const LayerSampling s(full, {1.0 / 32, 4096});
  const auto sampled = collective::plan_sampled_buckets(s.numels(), full);
  const auto whole = collective::plan_buckets(full);
  ASSERT_EQ(sampled.buckets.size(), whole.buckets.size());
  for (std::size_t b = 0; b < whole.buckets.size(); ++b) {
    EXPECT_EQ(sampled.buckets[b].tensors, whole.buckets[b].tensors);
    EXPECT_EQ(sampled.buckets[b].wire_numel, whole.buckets[b].numel);
    EXPECT_EQ(whole.buckets[b].wire_numel, whole.buckets[b].numel);
  }
  EXPECT_EQ(sampled.buckets[1].numel, s.numels()[2] + s.numels()[3]);
  EXPECT_THROW(collective::plan_sampled_buckets({10, 20}, {10}), std::invalid_argument);
  EXPECT_THROW(collective::plan_sampled_buckets({10, 20}, {10, 19}), std::invalid_argument);
}

TEST(WireScale, HeadersOnceBodiesScaled) {
  const collective::WireScale none;
  EXPECT_EQ(none.wire_bytes(1000), 1000u);
  const collective::WireScale sparse{16.0, 20};
  EXPECT_EQ(sparse.wire_bytes(20 + 256 * 8), 20u + 4096u * 8u);
  EXPECT_EQ(sparse.wire_bytes(12), 12u);  // an abort shorter than the headers
  const collective::WireScale odd{5000.0 / 4096.0, 4};
  EXPECT_EQ(odd.wire_bytes(4 + 4096 * 4), 4u + 20000u);
}

TEST(StandingFor, ARealTransportRefusesASampleButSendsAWholeMessage) {
  comm::InProcFabric fabric(2);
  std::atomic<int> received{0};
  fabric.endpoint(1).on_receive([&](comm::Message&& m) {
    EXPECT_EQ(comm::wire_size(m), 3u);
    ++received;
  });
  fabric.endpoint(0).on_error([](const comm::TransportError&) {});
  fabric.endpoint(1).on_error([](const comm::TransportError&) {});
  EXPECT_THROW(fabric.endpoint(0).send_standing_for(1, 7, std::vector<uint8_t>(3), 300, nullptr), std::logic_error);
  fabric.endpoint(0).send_standing_for(1, 7, std::vector<uint8_t>(3), 3, nullptr);
  for (int i = 0; i < 200 && received.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(received.load(), 1);
}

// Timing mode's pools hold a sampled layer's sample only; fill() hands out
// that many values, drawn like the whole layer's.
TEST(SampledSyntheticGradients, PoolsHoldTheSamplesDrawnLikeTheWholeLayers) {
  data::SyntheticOptions options;
  const auto train = data::make_synthetic_dataset(options, data::Split::kTrain);
  const auto whole = SyntheticGradients::shared(model::zoo_model("cnn"), *train, 5);
  const auto sampled = SyntheticGradients::shared(model::zoo_model("cnn"), *train, 5, {0.1, 256});
  EXPECT_EQ(sampled->numels(), whole->numels());
  ASSERT_TRUE(sampled->sampling().sampled());
  for (std::size_t l = 0; l < whole->numels().size(); ++l) {
    const std::size_t n = sampled->sampling().numels()[l];
    std::vector<float> a(whole->numels()[l]), b(n + 1, -7.0f);
    whole->fill(l, 11, 1.0f, a.data());
    sampled->fill(l, 11, 1.0f, b.data());
    EXPECT_EQ(b[n], -7.0f) << "layer " << l << " wrote past its sample";
    if (n < 4096) continue;
    // Mean |g| of the sample within 10% of the whole layer's.
    auto mean_abs = [](const float* v, std::size_t count) {
      double sum = 0;
      for (std::size_t i = 0; i < count; ++i) sum += std::fabs(v[i]);
      return sum / static_cast<double>(count);
    };
    EXPECT_NEAR(mean_abs(b.data(), n) / mean_abs(a.data(), a.size()), 1.0, 0.1) << "layer " << l;
  }
}

}  // namespace
}  // namespace st::train
