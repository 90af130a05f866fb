// Timing mode's synthetic gradients (core/train/node/synthetic_gradients.h) must
// look like the real ones they were recorded from: per layer, the quantiles
// of |g| of a drawn gradient match those of the real gradient, draws differ
// from each other (so nodes and iterations select different entries), and
// the layout is the model's.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <numeric>
#include <utility>
#include <vector>

#include "core/data/dataset.h"
#include "core/data/synthetic.h"
#include "core/model/model.h"
#include "core/train/node/synthetic_gradients.h"
#include "core/util/sort_nonnegative.h"

namespace st::train {
namespace {

std::vector<float> sorted_magnitudes(std::vector<float> v) {
  for (auto& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return v;
}

// Fractions of `sorted` below and at most `t`.
std::pair<double, double> cdf_at(const std::vector<float>& sorted, float t) {
  const auto below = std::lower_bound(sorted.begin(), sorted.end(), t) - sorted.begin();
  const auto at_most = std::upper_bound(sorted.begin(), sorted.end(), t) - sorted.begin();
  const double n = static_cast<double>(sorted.size());
  return {static_cast<double>(below) / n, static_cast<double>(at_most) / n};
}

TEST(SyntheticGradients, DrawsFollowTheRecordedMagnitudes) {
  data::SyntheticOptions options;
  const auto train = data::make_synthetic_dataset(options, data::Split::kTrain);
  const uint64_t seed = 3;
  const auto synthetic = SyntheticGradients::shared(model::zoo_model("cnn"), *train, seed);

  // The real gradient it was recorded from: same model, seed and samples.
  const auto shape = train->image_shape();
  const auto m = model::make_model("cnn", {shape.channels, shape.height, shape.width, train->classes()}, seed);
  std::vector<std::size_t> first(SyntheticGradients::kRecordBatch);
  std::iota(first.begin(), first.end(), std::size_t{0});
  const auto batch = train->get_batch(Span<const std::size_t>(first));
  m.zero_grad();
  torch::nn::functional::cross_entropy(m.forward(batch.images), batch.labels).backward();
  const auto params = m.named_parameters();
  ASSERT_EQ(synthetic->names().size(), params.size());

  for (std::size_t l = 0; l < params.size(); ++l) {
    EXPECT_EQ(synthetic->names()[l], params[l].name);
    const auto grad = params[l].tensor.grad().contiguous();
    const std::vector<float> real(grad.data_ptr<float>(), grad.data_ptr<float>() + grad.numel());
    std::vector<float> drawn(synthetic->numels()[l]), other(synthetic->numels()[l]);
    ASSERT_EQ(drawn.size(), real.size());
    synthetic->fill(l, 11, 1.0f, drawn.data());
    synthetic->fill(l, 12, 1.0f, other.data());
    if (real.size() < 1000) continue;  // biases: too few values for quantiles
    // The distributions of |g| agree (a Kolmogorov-Smirnov-style check at
    // the real gradient's quantiles; ties, such as the zeros of dead units,
    // count on both sides): a fraction q of the draw lies at or below the
    // real q-quantile, within sampling error.
    const auto real_sorted = sorted_magnitudes(real), drawn_sorted = sorted_magnitudes(drawn);
    for (double q : {0.25, 0.5, 0.9, 0.99}) {
      const float t = real_sorted[static_cast<std::size_t>(q * static_cast<double>(real_sorted.size() - 1))];
      const auto [below, at_most] = cdf_at(drawn_sorted, t);
      EXPECT_LE(below, q + 0.04) << params[l].name << " quantile " << q;
      EXPECT_GE(at_most, q - 0.04) << params[l].name << " quantile " << q;
    }
    EXPECT_NE(drawn, other) << params[l].name << ": two draws are the same";
  }
  // The scale multiplies: a node of G workers hands over G x one draw.
  std::vector<float> one(synthetic->numels()[0]), three(synthetic->numels()[0]);
  synthetic->fill(0, 5, 1.0f, one.data());
  synthetic->fill(0, 5, 3.0f, three.data());
  for (std::size_t i = 0; i < one.size(); ++i) ASSERT_FLOAT_EQ(three[i], 3 * one[i]);
}

// The radix sort that records the magnitudes gives std::sort's order, on
// both of its paths (short: std::sort; long: two radix passes), with the
// values whose bits are special: zeros, subnormals, infinity, ties.
TEST(SortNonnegative, SameOrderAsStdSort) {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{1000}, std::size_t{200003}}) {
    std::vector<float> values(n);
    uint64_t state = 7;
    for (auto& v : values) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const auto bits = static_cast<uint32_t>(state >> 33);  // sign clear
      std::memcpy(&v, &bits, sizeof(v));
      if (std::isnan(v)) v = 0.0f;
    }
    if (n > 10) {
      values[1] = 0.0f;
      values[2] = std::numeric_limits<float>::denorm_min();
      values[3] = std::numeric_limits<float>::infinity();
      values[4] = values[5] = 1.5f;
    }
    auto expected = values;
    std::sort(expected.begin(), expected.end());
    sort_nonnegative(values);
    ASSERT_EQ(values, expected) << n << " values";
  }
}

TEST(SortNonnegative, RefusesNegativeValuesAndNaN) {
  std::vector<float> negative{1.0f, -2.0f}, nan{std::nanf("")}, negative_zero{-0.0f};
  EXPECT_THROW(sort_nonnegative(negative), std::invalid_argument);
  EXPECT_THROW(sort_nonnegative(nan), std::invalid_argument);
  EXPECT_THROW(sort_nonnegative(negative_zero), std::invalid_argument);
}

}  // namespace
}  // namespace st::train
