#include "core/data/npz_dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

// The checks of a dataset file that need no pixel values: arrays present,
// shapes, dtypes, labels. Torch-free (st_npz), so that the fuzz target
// reaches them without LibTorch.
namespace st::data {
namespace {

constexpr int64_t kMaxChannels = 64;
constexpr int64_t kMaxClasses = 1000000;

bool is_integer(const NpyDtype& d) { return d.kind == 'u' || d.kind == 'i'; }

// A split's images, checked against the first split's geometry and dtype.
struct Geometry {
  uint64_t samples = 0;
  int64_t channels = 1, height = 0, width = 0;
  NpyDtype dtype;
};

Geometry geometry_of(const NpzArchive& archive, const char* field) {
  const NpyHeader h = archive.header(field);
  auto fail = [&](const std::string& problem) { throw DatasetFileError(archive.file(), field, problem); };
  if (!(h.dtype == NpyDtype{'u', 1}) && !(h.dtype == NpyDtype{'f', 4}))
    fail(fmt::format("images are {}; expected uint8 (u1) or float32 (f4)", h.dtype.name()));
  if (h.shape.size() != 3 && h.shape.size() != 4)
    fail(fmt::format("shape ({}) is neither [N, H, W] nor [N, C, H, W]", fmt::join(h.shape, ", ")));
  Geometry g;
  g.dtype = h.dtype;
  g.samples = static_cast<uint64_t>(h.shape[0]);
  if (h.shape.size() == 4) g.channels = h.shape[1];
  g.height = h.shape[h.shape.size() - 2];
  g.width = h.shape[h.shape.size() - 1];
  if (g.samples == 0) fail("holds no samples");
  if (g.channels < 1 || g.channels > kMaxChannels)
    fail(fmt::format("{} channels; expected 1..{} (images are [N, C, H, W]; transpose NHWC data to NCHW)",
                     g.channels, kMaxChannels));
  if (g.height < 1 || g.width < 1) fail(fmt::format("images of {}x{} pixels", g.height, g.width));
  return g;
}

void require_same(const NpzArchive& archive, const char* field, const Geometry& g, const Geometry& first) {
  auto fail = [&](const std::string& problem) { throw DatasetFileError(archive.file(), field, problem); };
  if (g.dtype.name() != first.dtype.name())
    fail(fmt::format("images are {} but x_train's are {}", g.dtype.name(), first.dtype.name()));
  if (g.channels != first.channels || g.height != first.height || g.width != first.width)
    fail(fmt::format("images are {}x{}x{} but x_train's are {}x{}x{}", g.channels, g.height, g.width, first.channels,
                     first.height, first.width));
}

// Labels as int32, checked for dtype, shape and sign; `classes` is checked
// once it is known (check_labels).
std::vector<int32_t> read_labels(const NpzArchive& archive, const char* field, uint64_t samples, const char* images) {
  const NpyArray y = archive.read(field);
  auto fail = [&](const std::string& f, const std::string& problem) { throw DatasetFileError(archive.file(), f, problem); };
  if (!is_integer(y.header.dtype)) fail(field, fmt::format("labels are {}; expected an integer dtype", y.header.dtype.name()));
  if (y.header.shape.size() != 1)
    fail(field, fmt::format("shape ({}) is not one-dimensional [N]", fmt::join(y.header.shape, ", ")));
  if (static_cast<uint64_t>(y.header.shape[0]) != samples)
    fail(field, fmt::format("holds {} labels but {} holds {} images", y.header.shape[0], images, samples));
  std::vector<int32_t> labels(samples);
  for (uint64_t i = 0; i < samples; ++i) {
    const int64_t label = y.integer(i);
    // (A u8 label past int64's range reads as negative.)
    if (label < 0 || label >= kMaxClasses) fail(fmt::format("{}[{}]", field, i), fmt::format("label {} is outside 0..{}", label, kMaxClasses - 1));
    labels[i] = static_cast<int32_t>(label);
  }
  return labels;
}

int64_t declared_classes(const NpzArchive& archive) {
  const NpyArray c = archive.read("classes");
  auto fail = [&](const std::string& problem) { throw DatasetFileError(archive.file(), "classes", problem); };
  if (!is_integer(c.header.dtype)) fail(fmt::format("is {}; expected an integer", c.header.dtype.name()));
  if (c.header.elements() != 1 || c.header.shape.size() > 1) fail("expected one integer (a scalar)");
  const int64_t classes = c.integer(0);
  if (classes < 2 || classes > kMaxClasses) fail(fmt::format("{} is outside 2..{}", classes, kMaxClasses));
  return classes;
}

void check_labels(const NpzArchive& archive, const char* field, const std::vector<int32_t>& labels, int64_t classes,
                  bool declared) {
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < classes) continue;
    throw DatasetFileError(archive.file(), fmt::format("{}[{}]", field, i),
                           fmt::format("label {} is outside 0..{}{}", labels[i], classes - 1,
                                       declared ? " (the file's 'classes')" : ""));
  }
}

}  // namespace

CheckedNpzDataset check_npz_dataset(NpzArchive file) {
  CheckedNpzDataset out{std::move(file), {}, {}, {}, {}};
  const NpzArchive& archive = out.archive;
  const std::string& path = archive.file();
  for (const char* required : {kNpzTrain.x, kNpzTrain.y, kNpzTest.x, kNpzTest.y})
    if (!archive.has(required))
      throw DatasetFileError(path, required,
                             fmt::format("missing: a dataset file holds x_train, y_train, x_test, y_test (and "
                                         "optionally x_val, y_val, classes, mean, std); this one holds {}",
                                         archive.names().empty() ? "no arrays" : fmt::format("{}", fmt::join(archive.names(), ", "))));
  const bool has_val = archive.has(kNpzValidation.x), has_val_labels = archive.has(kNpzValidation.y);
  if (has_val != has_val_labels)
    throw DatasetFileError(path, has_val ? kNpzValidation.y : kNpzValidation.x, "missing: x_val and y_val come together");

  const Geometry train = geometry_of(archive, kNpzTrain.x);
  const Geometry test = geometry_of(archive, kNpzTest.x);
  require_same(archive, kNpzTest.x, test, train);
  std::optional<Geometry> validation;
  if (has_val) {
    validation = geometry_of(archive, kNpzValidation.x);
    require_same(archive, kNpzValidation.x, *validation, train);
  }
  out.train_labels = read_labels(archive, kNpzTrain.y, train.samples, kNpzTrain.x);
  out.test_labels = read_labels(archive, kNpzTest.y, test.samples, kNpzTest.x);
  if (validation) out.validation_labels = read_labels(archive, kNpzValidation.y, validation->samples, kNpzValidation.x);

  const bool declared = archive.has("classes");
  int64_t classes = 0;
  if (declared) {
    classes = declared_classes(archive);
  } else {
    for (const auto* labels : {&out.train_labels, &out.validation_labels, &out.test_labels})
      for (const int32_t label : *labels) classes = std::max<int64_t>(classes, label + 1);
    if (classes < 2)
      throw DatasetFileError(path, kNpzTrain.y, "every label is 0: a classifier needs at least two classes");
  }
  check_labels(archive, kNpzTrain.y, out.train_labels, classes, declared);
  check_labels(archive, kNpzTest.y, out.test_labels, classes, declared);
  if (validation) check_labels(archive, kNpzValidation.y, out.validation_labels, classes, declared);

  NpzDatasetInfo& info = out.info;
  info.channels = train.channels, info.height = train.height, info.width = train.width;
  info.classes = classes;
  info.pixels = train.dtype;
  info.train = train.samples, info.test = test.samples, info.validation = validation ? validation->samples : 0;
  return out;
}


NpzDatasetInfo describe_npz_dataset(const std::string& path) {
  return check_npz_dataset(NpzArchive::open(path)).info;
}

}  // namespace st::data
