// Label-skewed placement of the training set across nodes
// (core/data/placement.h) and the samplers each node's workers get from it
// (core/train/node/worker_samplers.h), through to a run that trains on it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/data/dataset.h"
#include "core/data/placement.h"
#include "core/data/synthetic.h"
#include "core/train/node/worker_samplers.h"
#include "train_test_util.h"

namespace st {
namespace {

// 10 classes of 100 samples each, interleaved (label = index mod 10).
std::vector<long long> interleaved_labels(std::size_t per_class = 100, long long classes = 10) {
  std::vector<long long> labels(per_class * static_cast<std::size_t>(classes));
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<long long>(i) % classes;
  return labels;
}

// How many of `samples` each class has.
std::map<long long, int> class_counts(const std::vector<long long>& labels, const std::vector<std::size_t>& samples) {
  std::map<long long, int> counts;
  for (auto i : samples) ++counts[labels[i]];
  return counts;
}

TEST(LabelSkewedPlacement, EveryNodeHoldsDisjointSamplesThatCoverTheSet) {
  const auto labels = interleaved_labels();
  for (double skew : {0.0, 0.5, 0.9, 1.0}) {
    std::multiset<std::size_t> seen;
    for (int node = 0; node < 3; ++node) {
      const auto mine = data::label_skewed_samples(labels, 10, {2, 1, 1}, node, skew);
      EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
      seen.insert(mine.begin(), mine.end());
    }
    ASSERT_EQ(seen.size(), labels.size()) << "skew " << skew;
    std::size_t expected = 0;
    for (auto index : seen) ASSERT_EQ(index, expected++) << "skew " << skew;  // each sample exactly once
  }
}

TEST(LabelSkewedPlacement, FullSkewGivesEachNodeOnlyItsOwnClasses) {
  const auto labels = interleaved_labels();
  for (int node = 0; node < 2; ++node) {
    const auto counts = class_counts(labels, data::label_skewed_samples(labels, 10, {2, 2}, node, 1.0));
    ASSERT_EQ(counts.size(), 5u);
    for (const auto& [label, count] : counts) {
      EXPECT_EQ(label % 2, node);  // class c lives at node c mod 2
      EXPECT_EQ(count, 100);       // all of it
    }
  }
}

TEST(LabelSkewedPlacement, PartialSkewKeepsThatFractionAtHomeAndSharesTheRestByWorkers) {
  const auto labels = interleaved_labels();
  // Node 0 has 3 of the 4 workers. Class 0's home is node 0: 0.6 + 0.4 x 3/4
  // = 90% of it there; class 1's home is node 1: 0.4 x 3/4 = 30% at node 0.
  const auto counts = class_counts(labels, data::label_skewed_samples(labels, 10, {3, 1}, 0, 0.6));
  EXPECT_EQ(counts.at(0), 90);
  EXPECT_EQ(counts.at(1), 30);
  // No skew: every node holds its workers' share of every class.
  const auto even = class_counts(labels, data::label_skewed_samples(labels, 10, {3, 1}, 1, 0.0));
  for (long long c = 0; c < 10; ++c) EXPECT_EQ(even.at(c), 25) << "class " << c;
}

TEST(LabelSkewedPlacement, IsFixedAcrossCallsAndRejectsWhatCannotBePlaced) {
  const auto labels = interleaved_labels();
  EXPECT_EQ(data::label_skewed_samples(labels, 10, {1, 1}, 1, 0.7), data::label_skewed_samples(labels, 10, {1, 1}, 1, 0.7));
  EXPECT_THROW(data::label_skewed_samples(labels, 10, {1, 1}, 0, 1.5), std::invalid_argument);
  EXPECT_THROW(data::label_skewed_samples(labels, 10, {1, 1}, 0, -0.1), std::invalid_argument);
  EXPECT_THROW(data::label_skewed_samples(labels, 10, {1, 1}, 2, 0.5), std::invalid_argument);
  EXPECT_THROW(data::label_skewed_samples(labels, 10, {1, 0}, 0, 0.5), std::invalid_argument);
  EXPECT_THROW(data::label_skewed_samples({0, 1, 12}, 10, {1, 1}, 0, 0.5), std::invalid_argument);
  // Two classes over three nodes with full skew: node 2 would hold nothing.
  const std::vector<long long> two_classes = {0, 1, 0, 1, 0, 1};
  try {
    (void)data::label_skewed_samples(two_classes, 2, {1, 1, 1}, 2, 1.0);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("label_skew"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 2"), std::string::npos) << e.what();
  }
}

data::SyntheticOptions small_synthetic() {
  data::SyntheticOptions o;
  o.train_size = 2000;
  o.test_size = 200;
  return o;
}

TEST(WorkerSamplers, WithSkewAWorkerReadsOnlyItsNodesSamplesAndTheNodesWorkersSplitThem) {
  const auto train = data::make_synthetic_dataset(small_synthetic(), data::Split::kTrain);
  train::TrainConfig c = train::small_config("ddp");
  c.label_skew = 1.0;
  for (int node = 0; node < c.nodes; ++node) {
    const auto samplers = train::worker_samplers(c, *train, node);
    ASSERT_EQ(samplers.size(), 2u);
    std::multiset<std::size_t> seen;
    for (uint64_t epoch : {0u, 3u})
      for (const auto& sampler : samplers)
        for (auto index : sampler.epoch_indices(epoch)) {
          EXPECT_EQ(train->label(index) % 2, node) << "sample " << index;
          if (epoch == 0) seen.insert(index);
        }
    const auto mine = data::label_skewed_samples(*train, {2, 2}, node, 1.0);
    EXPECT_EQ(std::vector<std::size_t>(seen.begin(), seen.end()), mine);  // an epoch covers the node's pool once
  }
}

TEST(WorkerSamplers, WithoutSkewEveryWorkerShardsTheWholeSet) {
  const auto train = data::make_synthetic_dataset(small_synthetic(), data::Split::kTrain);
  const train::TrainConfig c = train::small_config("ddp");
  std::set<long long> node0_labels;
  std::size_t total = 0;
  for (int node = 0; node < c.nodes; ++node)
    for (const auto& sampler : train::worker_samplers(c, *train, node)) {
      EXPECT_EQ(sampler.world_size(), 4);
      const auto shard = sampler.epoch_indices(0);
      total += shard.size();
      if (node == 0)
        for (auto i : shard) node0_labels.insert(train->label(i));
    }
  EXPECT_EQ(total, train->size());
  EXPECT_EQ(node0_labels.size(), 10u);  // every class at every node
}

// A real run on the skewed placement: it trains, names the skew in its
// manifest, and a skew the data cannot take stops it with the field's name.
TEST(WorkerSamplers, ARunTrainsOnTheSkewedPlacementAndRecordsIt) {
  train::TrainConfig c = train::small_config("ddp");
  c.label_skew = 0.9;
  c.out_dir = (std::filesystem::temp_directory_path() / ("st-placement-" + std::to_string(::getpid()))).string();
  const auto result = train::train_real(c);
  ASSERT_FALSE(result.evaluations.empty());
  EXPECT_GT(result.evaluations.back().accuracy, 0.3);  // 10 classes: chance is 0.1
  ASSERT_EQ(result.checksums.size(), 2u);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);  // ddp: both nodes hold the same model
  std::ifstream manifest(c.out_dir + "/manifest.json");
  const auto m = nlohmann::json::parse(manifest);
  EXPECT_DOUBLE_EQ(m.at("label_skew").get<double>(), 0.9);
  std::filesystem::remove_all(c.out_dir);

  c.label_skew = 1.5;
  c.out_dir.clear();
  try {
    (void)train::train_real(c);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("label_skew"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace st
