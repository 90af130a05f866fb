#pragma once
// The hyperparameters of the zoo's models and the input shapes each accepts.
// The torch builders (mlp.cc, cnn.cc, resnet.cc, vit.cc) and the hand-counted
// FLOPs (flops.cc) both read them, so the two cannot drift apart. No torch
// here: flops.cc compiles without it.
#include <array>
#include <cstdint>
#include <string>

#include "core/model/model.h"

namespace st::model {

inline constexpr int64_t kMlpHidden = 256;

inline constexpr int64_t kCnnConv1Channels = 32;
inline constexpr int64_t kCnnConv2Channels = 64;
inline constexpr int64_t kCnnHidden = 128;

// Output channels of the 3x3 convolutions of each ResNet stage; every stage
// after the first starts with a stride-2 block.
inline constexpr std::array<int64_t, 4> kResNetStageWidths{64, 128, 256, 512};
inline constexpr int64_t kResNet18BlocksPerStage = 2;

// ImageNet-style bottleneck ResNets: a bottleneck block's last 1x1
// convolution widens the stage width by this factor.
inline constexpr int64_t kBottleneckExpansion = 4;
inline constexpr int64_t kImageNetStemWidth = 64;
using BottleneckStages = std::array<int64_t, 4>;  // blocks per stage
inline constexpr BottleneckStages kResNet50Stages{3, 4, 6, 3};
inline constexpr BottleneckStages kResNet152Stages{3, 8, 36, 3};

struct VitConfig {
  int64_t patch;       // square patches of patch x patch pixels, one token each
  int64_t dim;         // token width
  int64_t depth;       // encoder blocks
  int64_t heads;       // attention heads (dim / heads each)
  int64_t mlp_hidden;  // hidden width of each block's MLP
  double layer_norm_eps;
};
// The zoo's small ViT for 28x28 and 32x32 images.
inline constexpr VitConfig kVitSmall{4, 96, 4, 4, 192, 1e-5};
// ViT-Base/16; epsilon 1e-6 as in the original ViT and torchvision.
inline constexpr VitConfig kVitBase16{16, 768, 12, 12, 3072, 1e-6};

// Throws std::invalid_argument naming the model when `shape` is one the
// model cannot take (non-positive sizes, fewer than 2 classes, images too
// small for its down-sampling or not cut evenly into its patches).
void check_model_shape(const std::string& model, const ModelShape& shape);

}  // namespace st::model
