#include "core/model/architectures.h"

#include <fmt/format.h>

#include <stdexcept>

namespace st::model {
namespace {

void require_positive_sizes(const std::string& model, const ModelShape& shape) {
  if (shape.channels <= 0 || shape.height <= 0 || shape.width <= 0 || shape.classes < 2) {
    throw std::invalid_argument(fmt::format(
        "model '{}': shape {}x{}x{} with {} classes is invalid (need positive sizes, >= 2 classes)",
        model, shape.channels, shape.height, shape.width, shape.classes));
  }
}

void require_at_least(const std::string& model, const ModelShape& shape, int64_t side, const char* why) {
  if (shape.height < side || shape.width < side) {
    throw std::invalid_argument(fmt::format("model '{}' needs images of at least {}x{} ({}), got {}x{}", model,
                                            side, side, why, shape.height, shape.width));
  }
}

void require_patch_multiple(const std::string& model, const ModelShape& shape, int64_t patch) {
  if (shape.height % patch != 0 || shape.width % patch != 0) {
    throw std::invalid_argument(fmt::format("model '{}' cuts {}x{} patches; image size {}x{} is not a multiple",
                                            model, patch, patch, shape.height, shape.width));
  }
}

}  // namespace

void check_model_shape(const std::string& model, const ModelShape& shape) {
  require_positive_sizes(model, shape);
  if (model == "cnn") require_at_least(model, shape, 4, "two 2x2 poolings");
  if (model == "resnet50" || model == "resnet152") require_at_least(model, shape, 32, "five stride-2 steps");
  if (model == "vit") require_patch_multiple(model, shape, kVitSmall.patch);
  if (model == "vit-b16") require_patch_multiple(model, shape, kVitBase16.patch);
}

}  // namespace st::model
