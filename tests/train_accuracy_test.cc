// Acceptance: 2 nodes x 2 workers train the CNN on Fashion-MNIST to at least
// 85% test accuracy (full test set) with stellatrain at density 5% and with
// ddp, and every node ends with bitwise identical parameters. About a minute
// per system on a 2-core machine.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>

#include "core/train/run/real_backend.h"
#include "core/train/run/trainer.h"

namespace st::train {
namespace {

struct AccuracyCase {
  std::string system;
  int iterations;
};

class Accuracy : public ::testing::TestWithParam<AccuracyCase> {};

// "Reaches": the best of the evaluations on the full test set (every 100
// iterations and at the end), as time-to-accuracy counts it. stellatrain's
// accuracy wanders by a few points between evaluations (staleness 1 on real
// threads is not deterministic: recorded runs saw 84.3% at 400 and 82.2% at
// 600 iterations in one run), so it gets more iterations than ddp.
TEST_P(Accuracy, CnnOnFashionMnistReaches85Percent) {
  TrainConfig c;
  c.use_system(GetParam().system);
  c.model = "cnn";
  c.dataset = "fashion-mnist";
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.batch_per_worker = 64;
  c.iterations = GetParam().iterations;
  c.lr = 0.05;
  c.momentum = 0.9;  // stellatrain at its default fixed density, 5%
  c.eval_interval = 100;
  c.eval_samples = 0;  // the whole test set
  c.quiet = true;
  const auto result = RealBackend().train(c);
  ASSERT_FALSE(result.evaluations.empty());
  double best = 0;
  for (const auto& e : result.evaluations) {
    EXPECT_EQ(e.samples, 10000u);
    best = std::max(best, e.accuracy);
    std::cout << c.system << " iteration " << e.iteration << ": " << e.accuracy << "\n";
  }
  EXPECT_GE(best, 0.85);
  ASSERT_EQ(result.checksums.size(), 2u);
  EXPECT_EQ(result.checksums[0], result.checksums[1]);
}

INSTANTIATE_TEST_SUITE_P(Systems, Accuracy,
                         ::testing::Values(AccuracyCase{"stellatrain", 1000}, AccuracyCase{"ddp", 600}),
                         [](const auto& info) { return info.param.system; });

}  // namespace
}  // namespace st::train
