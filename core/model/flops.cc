#include "core/model/flops.h"

#include <fmt/format.h>

#include <cmath>

#include <stdexcept>

namespace st::model {
namespace {

// 2 x MACs of a k x k convolution producing an out_h x out_w map.
double conv(double in, double out, double k, double out_h, double out_w) {
  return 2 * in * out * k * k * out_h * out_w;
}
double linear(double in, double out, double rows = 1) { return 2 * in * out * rows; }

double mlp(const ModelShape& s) {  // fc1 (256 hidden), fc2
  const double in = static_cast<double>(s.channels * s.height * s.width);
  return linear(in, 256) + linear(256, static_cast<double>(s.classes));
}

double cnn(const ModelShape& s) {  // conv 32, pool, conv 64, pool, fc 128, fc
  const double h = static_cast<double>(s.height), w = static_cast<double>(s.width);
  return conv(static_cast<double>(s.channels), 32, 3, h, w) + conv(32, 64, 3, h / 2, w / 2) +
         linear(64 * static_cast<double>((s.height / 4) * (s.width / 4)), 128) +
         linear(128, static_cast<double>(s.classes));
}

double resnet18(const ModelShape& s) {  // CIFAR stem, 4 stages x 2 basic blocks
  const double widths[] = {64, 128, 256, 512};
  double h = static_cast<double>(s.height), w = static_cast<double>(s.width);
  double flops = conv(static_cast<double>(s.channels), 64, 3, h, w);
  double in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      const bool down = stage > 0 && block == 0;
      if (down) h = std::ceil(h / 2), w = std::ceil(w / 2);
      flops += conv(in, widths[stage], 3, h, w) + conv(widths[stage], widths[stage], 3, h, w);
      if (down || in != widths[stage]) flops += conv(in, widths[stage], 1, h, w);
      in = widths[stage];
    }
  }
  return flops + linear(512, static_cast<double>(s.classes));
}

double vit(const ModelShape& s) {  // 4x4 patches, dim 96, depth 4, MLP 192
  const double dim = 96, patches = static_cast<double>((s.height / 4) * (s.width / 4)), tokens = patches + 1;
  double flops = conv(static_cast<double>(s.channels), dim, 4, 1, patches);
  const double block = linear(dim, 3 * dim, tokens)        // qkv
                       + 2 * (2 * tokens * tokens * dim)   // scores and weighted sum
                       + linear(dim, dim, tokens)          // proj
                       + linear(dim, 2 * dim, tokens) + linear(2 * dim, dim, tokens);  // MLP
  return flops + 4 * block + linear(dim, static_cast<double>(s.classes));
}

}  // namespace

double forward_flops_per_sample(const std::string& model, const ModelShape& shape) {
  if (model == "mlp") return mlp(shape);
  if (model == "cnn") return cnn(shape);
  if (model == "resnet18") return resnet18(shape);
  if (model == "vit") return vit(shape);
  throw std::invalid_argument(fmt::format("model '{}': no FLOP count (expected mlp, cnn, resnet18 or vit)", model));
}

}  // namespace st::model
