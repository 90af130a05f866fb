// `stellatrain data`: make a dataset file from a built-in dataset's files,
// and check one before a run reads it.
#include "apps/data_command.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "core/data/cifar10.h"
#include "core/data/dataset.h"
#include "core/data/fashion_mnist.h"
#include "core/data/npz_dataset.h"

namespace st::apps {
namespace {

struct ConvertOptions {
  std::string from;
  std::string dir;
  std::string out;
};

void convert(const ConvertOptions& o) {
  std::unique_ptr<data::ImageDataset> train, test;
  if (o.from == "fashion-mnist") {
    const std::string dir = o.dir.empty() ? data::default_fashion_mnist_dir() : o.dir;
    train = data::load_fashion_mnist(data::Split::kTrain, dir);
    test = data::load_fashion_mnist(data::Split::kTest, dir);
  } else {
    const std::string dir = o.dir.empty() ? data::default_cifar10_dir() : o.dir;
    train = data::load_cifar10(data::Split::kTrain, dir);
    test = data::load_cifar10(data::Split::kTest, dir);
  }
  data::write_npz_dataset(o.out, *train, *test);
  const data::NpzDatasetInfo info = data::describe_npz_dataset(o.out);
  std::cout << fmt::format("wrote {}: {} train and {} test images of {}x{}x{}, {} classes\n", o.out, info.train,
                           info.test, info.channels, info.height, info.width, info.classes);
}

void check(const std::string& path) {
  const data::NpzDatasets d = data::load_npz_datasets(path);
  const data::NpzDatasetInfo info = data::describe_npz_dataset(path);
  std::cout << fmt::format(
      "{}: {} images of {}x{}x{} (channels x height x width), {} classes; {} train, {} test, {}\n", path,
      info.pixels.name() == "u1" ? "uint8" : "float32", info.channels, info.height, info.width, info.classes,
      info.train, info.test,
      info.validation ? fmt::format("{} validation (x_val)", info.validation)
                      : std::string("validation carved from train (a fixed tenth)"));
}

}  // namespace

void add_data_command(CLI::App& app) {
  auto* data = app.add_subcommand("data", "Dataset files of one's own: convert, check (docs/byo.md)");
  data->require_subcommand(1);

  auto convert_options = std::make_shared<ConvertOptions>();
  auto* c = data->add_subcommand("convert", "Write a built-in dataset's files as a .npz dataset file");
  c->add_option("--from", convert_options->from, "fashion-mnist (IDX files) or cifar10 (binary batches)")
      ->required()
      ->check(CLI::IsMember({"fashion-mnist", "cifar10"}));
  c->add_option("--dir", convert_options->dir, "The source files' folder (default: the dataset's own)");
  c->add_option("--out", convert_options->out, "The .npz file to write")->required();
  c->callback([convert_options] { convert(*convert_options); });

  auto path = std::make_shared<std::string>();
  auto* k = data->add_subcommand("check", "Read a .npz dataset file whole and say what a run would see");
  k->add_option("file", *path, "The .npz file")->required();
  k->callback([path] { check(*path); });
}

}  // namespace st::apps
